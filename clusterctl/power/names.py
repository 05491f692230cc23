"""Slurm node name <-> scale set and instance id: the deterministic naming of the cluster.

A node of fabric group `<partition>-pg<k>` is the VM with instance id `i` in the scale set
`<cluster>-<partition>-pg<k>` and is called `<partition>-pg<k>-<i + 1>` (templates/scripts/
node-name.sh.j2, clusterctl/spec/topology.py). Uniform scale sets never reuse an instance id;
deallocate/start, reimage and redeploy keep it, so the name survives them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NODE_NAME = re.compile(r"^(?P<group>[a-z][a-z0-9]{0,14}-pg\d+)-(?P<index>[1-9]\d*)$")


@dataclass(frozen=True, order=True)
class NodeRef:
    name: str
    scale_set: str
    instance_id: str


def node_ref(cluster: str, name: str) -> NodeRef:
    m = NODE_NAME.match(name)
    if not m:
        raise ValueError(f"'{name}' is not a node name of this cluster (<partition>-pg<k>-<n>)")
    return NodeRef(name, f"{cluster}-{m['group']}", str(int(m["index"]) - 1))


def node_name(cluster: str, vm_name: str) -> str:
    """Azure's VM name `<scale set>_<instance id>` -> the Slurm node name."""
    scale_set, _, instance = vm_name.rpartition("_")
    prefix = f"{cluster}-"
    if not scale_set.startswith(prefix) or not instance.isdigit():
        raise ValueError(f"'{vm_name}' is not a VM of cluster {cluster}")
    return f"{scale_set[len(prefix) :]}-{int(instance) + 1}"


def by_scale_set(refs: list[NodeRef]) -> dict[str, list[NodeRef]]:
    out: dict[str, list[NodeRef]] = {}
    for ref in sorted(refs):
        out.setdefault(ref.scale_set, []).append(ref)
    return out
