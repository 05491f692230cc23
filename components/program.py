"""The Pulumi program: spec in, resources and stack outputs out.

`__main__.py` (under `pulumi up`) and `clusterctl plan` (under the mock engine) both call run().
Each cluster component exposes `outputs`: the stack outputs later commands read. Their keys and
types are the contract in clusterctl/outputs.py.
"""

from __future__ import annotations

from typing import Any

import pulumi

from clusterctl import outputs as out
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour
from clusterctl.spec.model import ClusterSpec


def build(spec: ClusterSpec, stack: str) -> dict[str, Any]:
    """Create the cluster's components; return the stack outputs (values or Outputs)."""
    if spec.cloud == "azure" and spec.scheduler == "slurm":
        from components.azure.slurm_cluster import AzureSlurmCluster as Cluster
    elif spec.cloud == "aws" and spec.scheduler == "kubernetes":
        from components.aws.eks_cluster import EksGpuCluster as Cluster
    elif spec.cloud == "azure" and spec.scheduler == "kubernetes":
        from components.azure.aks_cluster import AksGpuCluster as Cluster
    else:  # the spec rules refuse other combinations first
        raise ValueError(f"{spec.cloud}/{spec.scheduler}")
    cluster = Cluster(spec.name, spec, stack)
    common: out.CommonOutputs = {
        out.STACK: stack,
        out.CLUSTER_NAME: spec.name,
        out.CLOUD: spec.cloud,
        out.SCHEDULER: spec.scheduler,
        out.COST_PER_HOUR: cost_per_hour(spec, catalog()).total,
        out.DRAIN_PREFIX: spec.health_checks.drain_prefix,
    }
    return {**cluster.outputs, **common}


def run(spec: ClusterSpec, stack: str) -> dict[str, Any]:
    outputs = build(spec, stack)
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
