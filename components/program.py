"""The Pulumi program: spec in, resources and stack outputs out.

`__main__.py` (under `pulumi up`) and `clusterctl plan` (under the mock engine) both call run().
Each cluster component exposes `outputs`: the stack outputs later commands read. Their keys and
types are the contract in clusterctl/outputs.py.
"""

from __future__ import annotations

import importlib
from typing import Any

import pulumi

from clusterctl import outputs as out
from clusterctl.clouds import cloud_of
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour
from clusterctl.spec.model import ClusterSpec


def build(spec: ClusterSpec, stack: str, **bound: Any) -> dict[str, Any]:
    """Create the cluster's components; return the stack outputs (values or Outputs). `bound`:
    what the entry point hands a Slurm cluster (`plan`, `user_data`: the files and each role's
    user-data rendered once for the run; `post_deploy`, the onDeploy validation), passed on only
    when given."""
    # Each cloud names the component that builds its cluster for each scheduler, imported only
    # when chosen (a plan of one pays for no other provider); a pair it lacks is refused by the
    # spec rules first (rules.supported_combination).
    module, name = cloud_of(spec.cloud).clusters[spec.scheduler]
    Cluster = getattr(importlib.import_module(module), name)
    cluster = Cluster(spec.name, spec, stack, **{k: v for k, v in bound.items() if v is not None})
    common: out.CommonOutputs = {
        out.STACK: stack,
        out.CLUSTER_NAME: spec.name,
        out.CLOUD: spec.cloud,
        out.SCHEDULER: spec.scheduler,
        out.COST_PER_HOUR: cost_per_hour(spec, catalog()).total,
        out.DRAIN_PREFIX: spec.health_checks.drain_prefix,
    }
    return {**cluster.outputs, **common}


def run(spec: ClusterSpec, stack: str, **bound: Any) -> dict[str, Any]:
    outputs = build(spec, stack, **bound)
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
