"""AWS layout rules: what the EKS VPC (components/aws/vpc.py) can hold, said before it is built.

The VPC's upper half is split into private subnets, one per zone: two subnets with up to two
zones, four with three or four; a node group sits in one subnet (its partition's first zone), the
system nodes in the first zone's. Every node needs at least one address of its subnet (its pods
take more under the VPC CNI); AWS keeps 5 of every subnet.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from clusterctl.errors import Finding
from clusterctl.platform import only_on, scheduler_of
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.model import ClusterSpec, field_path

MAX_ZONES = 4
AWS_SUBNET_RESERVED = 5


def _zones(spec: ClusterSpec) -> list[str]:
    zones: list[str] = []
    for part in spec.partitions:
        if part.zones and part.zones[0] not in zones:
            zones.append(part.zones[0])
    return zones


@only_on(cloud="aws")
def zones_fit_the_vpc(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """More zones than private subnets (one zone per partition: rules_k8s / aws_placement)."""
    zones = _zones(spec)
    if len(zones) > MAX_ZONES:
        first = {z: i for i, p in reversed(list(enumerate(spec.partitions))) for z in p.zones[:1]}
        for zone in zones[MAX_ZONES:]:
            yield Finding(
                "error",
                f"the partitions use {len(zones)} zones ({', '.join(zones)}) and the VPC has "
                f"private subnets for at most {MAX_ZONES}; put this partition in one of "
                f"{', '.join(zones[:MAX_ZONES])}",
                field_path("partitions", first[zone], "zones"),
            )


@only_on(cloud="aws")
def vpc_holds_the_nodes(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    space = ipaddress.IPv4Network(spec.network.address_space)
    zones = _zones(spec) or ["(first zone)"]
    if len(zones) > MAX_ZONES or space.prefixlen > 22:
        return  # zones_fit_the_vpc / network_layout say what is wrong
    upper = list(space.subnets(prefixlen_diff=1))[1]
    subnet = next(upper.subnets(prefixlen_diff=2 if len(zones) > 2 else 1))
    usable = subnet.num_addresses - AWS_SUBNET_RESERVED
    need = dict.fromkeys(zones, 0)
    if not scheduler_of(spec.scheduler).head_node:  # its system nodes, in the first zone
        need[zones[0]] += spec.kubernetes.system_nodes
    for part in spec.partitions:
        need[part.zones[0] if part.zones else zones[0]] += part.nodes
    for zone, nodes in need.items():
        if nodes > usable:
            yield Finding(
                "error",
                f"{nodes} nodes in {zone} do not fit its private subnet (a /{subnet.prefixlen} of "
                f"{space}, {usable} usable addresses, and pods need more); use a larger "
                f"addressSpace (e.g. a /16)",
                field_path("network", "addressSpace"),
            )


RULES = (zones_fit_the_vpc, vpc_holds_the_nodes)
