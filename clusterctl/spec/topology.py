"""How GPU nodes are grouped into scale sets (one InfiniBand fabric each) and named."""

from __future__ import annotations

import math
from dataclasses import dataclass

SCALE_SET_MAX_VMS = 100
"""A VM Scale Set with singlePlacementGroup=true holds at most 100 VMs (Azure docs,
"Virtual Machine Scale Sets and placement groups"); its VMs share one InfiniBand fabric."""


@dataclass(frozen=True)
class FabricGroup:
    """One scale set: a placement group, one IB fabric, one topology.conf switch."""

    partition: str
    index: int
    size: int

    @property
    def name(self) -> str:
        return f"{self.partition}-pg{self.index}"

    def hostnames(self) -> list[str]:
        return [f"{self.name}-{i}" for i in range(1, self.size + 1)]

    @property
    def hostlist(self) -> str:
        return f"{self.name}-[1-{self.size}]" if self.size > 1 else f"{self.name}-1"


def fabric_groups(partition: str, nodes: int) -> list[FabricGroup]:
    """Split `nodes` into as few scale sets as possible, sizes as even as possible."""
    sets = max(1, math.ceil(nodes / SCALE_SET_MAX_VMS))
    base, extra = divmod(nodes, sets)
    return [FabricGroup(partition, i, base + (1 if i < extra else 0)) for i in range(sets)]
