"""The cluster's address plan: pure, so rules, components and docs agree on it."""

from __future__ import annotations

import ipaddress

from clusterctl.spec.model import ClusterSpec


def subnet_plan(spec: ClusterSpec) -> dict[str, str]:
    """Scheduler: the first /24 of the address space; compute: its upper half."""
    space = ipaddress.IPv4Network(spec.network.address_space)
    halves = list(space.subnets(prefixlen_diff=1))
    scheduler = spec.network.scheduler_subnet or str(next(halves[0].subnets(new_prefix=24)))
    compute = spec.network.compute_subnet or str(halves[1])
    return {"scheduler": scheduler, "compute": compute}
