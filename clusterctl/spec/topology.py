"""How GPU nodes are grouped into scale sets (one InfiniBand fabric each) and named."""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.power.names import (
    computer_name_prefix,
    group_name,
    hostlist,
    slurm_name,
    vm_set_name,
)

SCALE_SET_MAX_VMS = 100
"""A VM Scale Set with singlePlacementGroup=true holds at most 100 VMs (Azure docs,
"Virtual Machine Scale Sets and placement groups"); its VMs share one InfiniBand fabric."""


@dataclass(frozen=True)
class ScaleSet:
    """One scale set, the one term for the group of GPU VMs that share a fabric: named
    `<partition>-pg<k>` (pg: its placement group, as CycleCloud names it), one InfiniBand fabric,
    one `SwitchName` in topology.conf (Slurm's word for it), and its VMs' node names
    `<name>-<n>`."""

    partition: str
    index: int
    size: int

    @property
    def name(self) -> str:
        return group_name(self.partition, self.index)

    def vm_set_name(self, cluster: str) -> str:
        return vm_set_name(cluster, self.name)

    @property
    def computer_name_prefix(self) -> str:
        return computer_name_prefix(self.name)

    def hostnames(self) -> list[str]:
        return [slurm_name(self.name, i) for i in range(1, self.size + 1)]

    @property
    def hostlist(self) -> str:
        return hostlist(self.name, 1, self.size)


def scale_sets_of(partition: str, nodes: int, limit: int = SCALE_SET_MAX_VMS) -> list[ScaleSet]:
    """Fill scale sets of `limit` VMs in order: pg0 full, then pg1, ..., the rest in the last.

    Never balanced: growing a partition then only grows its last set or opens a new one, and
    shrinking only takes from the end (the highest names), so a resize never shrinks a set that
    keeps running nodes (Azure deletes the VMs a capacity decrease drops, jobs and all).
    """
    if not 1 <= limit <= SCALE_SET_MAX_VMS:
        raise ValueError(f"a scale set holds 1 to {SCALE_SET_MAX_VMS} VMs, not {limit}")
    full, rest = divmod(nodes, limit)
    sizes = [limit] * full + ([rest] if rest or not full else [])
    return [ScaleSet(partition, i, size) for i, size in enumerate(sizes)]
