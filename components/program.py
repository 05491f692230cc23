"""The Pulumi program: spec in, resources and stack outputs out.

`__main__.py` (under `pulumi up`) and `clusterctl plan` (under the mock engine) both call run().
"""

from __future__ import annotations

from typing import Any

import pulumi

from clusterctl.catalog import catalog
from clusterctl.cost import cost_per_hour
from clusterctl.spec import ClusterSpec


def build(spec: ClusterSpec, stack: str) -> dict[str, Any]:
    """Create the cluster's components; return the stack outputs (values or Outputs)."""
    if spec.cloud == "azure" and spec.scheduler == "slurm":
        from components.azure.network import AzureNetwork

        net = AzureNetwork(spec.name, spec, stack)
        outputs: dict[str, Any] = {"resourceGroupName": net.resource_group.name}
    else:
        raise NotImplementedError(f"{spec.cloud}/{spec.scheduler} clusters are not built yet")
    outputs.update(
        {
            "clusterName": spec.name,
            "cloud": spec.cloud,
            "scheduler": spec.scheduler,
            "costPerHourUsd": cost_per_hour(spec, catalog()).total,
        }
    )
    return outputs


def run(spec: ClusterSpec, stack: str) -> dict[str, Any]:
    outputs = build(spec, stack)
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
