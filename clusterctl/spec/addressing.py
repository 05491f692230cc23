"""The cluster's address plan: pure, so rules, components and docs agree on it."""

from __future__ import annotations

import ipaddress

from clusterctl.spec.lustre import amlfs_subnet_prefix
from clusterctl.spec.model import ClusterSpec

LUSTRE_DEFAULT_PREFIX = 24
"""The default Managed Lustre subnet when its size asks for no larger one (up to 196 TiB)."""


def subnet_plan(spec: ClusterSpec) -> dict[str, str]:
    """Scheduler: the first /24 of the address space; compute: its upper half; with
    storage.lustre, `lustre`: its subnet (lustre_subnet)."""
    space = ipaddress.IPv4Network(spec.network.address_space)
    halves = list(space.subnets(prefixlen_diff=1))
    scheduler = spec.network.scheduler_subnet or str(next(halves[0].subnets(new_prefix=24)))
    compute = spec.network.compute_subnet or str(halves[1])
    plan = {"scheduler": scheduler, "compute": compute}
    lustre = spec.storage.lustre
    if lustre is not None:
        plan["lustre"] = lustre.subnet or lustre_subnet(halves[0], scheduler, lustre.size_tib)
    return plan


def lustre_subnet(lower_half: ipaddress.IPv4Network, scheduler: str, size_tib: int) -> str:
    """The first block of the lower half clear of the scheduler subnet, a /24 or the larger one
    Microsoft's table asks for the size; the lower half itself when none is clear (the rules
    then report the overlap)."""
    prefix = min(LUSTRE_DEFAULT_PREFIX, amlfs_subnet_prefix(size_tib) or 22)
    taken = ipaddress.IPv4Network(scheduler)
    if prefix < lower_half.prefixlen:
        return str(lower_half)
    for block in lower_half.subnets(new_prefix=prefix):
        if not block.overlaps(taken):
            return str(block)
    return str(lower_half)
