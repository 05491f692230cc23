"""EksVpc: a VPC with private subnets for the nodes (one per zone) and a NAT for their egress.

GPU node groups each sit in exactly one private subnet (one AZ): EFA traffic does not cross
subnets. EKS itself wants subnets in two zones, so there are always at least two.
"""

from __future__ import annotations

import ipaddress

import pulumi
import pulumi_aws as aws

from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.tags import cloud_tags

MIN_ZONES = 2


def vpc_zones(spec: ClusterSpec, available: list[str]) -> list[str]:
    """The partitions' zones first (in spec order), then other available zones up to two."""
    zones: list[str] = []
    for part in spec.partitions:
        for zone in part.zones[:1]:
            if zone not in zones:
                zones.append(zone)
    for zone in available:
        if len(zones) >= MIN_ZONES:
            break
        if zone not in zones:
            zones.append(zone)
    return zones


def vpc_subnet_plan(address_space: str, zones: list[str]) -> dict[str, dict[str, str]]:
    """Public /24s (NAT, load balancers) in the lower half; private subnets share the upper."""
    space = ipaddress.ip_network(address_space)
    lower, upper = space.subnets(prefixlen_diff=1)
    public = list(lower.subnets(new_prefix=max(24, lower.prefixlen + 2)))
    private = list(upper.subnets(prefixlen_diff=2 if len(zones) > 2 else 1))
    return {
        "public": {z: str(public[i]) for i, z in enumerate(zones[:MIN_ZONES])},
        "private": {z: str(private[i]) for i, z in enumerate(zones)},
    }


class EksVpc(pulumi.ComponentResource):
    def __init__(
        self, name: str, spec: ClusterSpec, stack: str, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("gpu-clusters:aws:Vpc", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = cloud_tags(spec, stack)
        available = aws.get_availability_zones(state="available").names
        self.zones = vpc_zones(spec, list(available))
        plan = vpc_subnet_plan(spec.network.address_space, self.zones)

        self.vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=spec.network.address_space,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={**tags, "Name": f"{spec.name}-{stack}"},
            opts=child,
        )
        igw = self._public(name, spec, plan, tags, child)
        self._private(name, spec, plan, tags, igw, child)
        self.register_outputs(
            {
                "vpcId": self.vpc.id,
                "privateSubnetIds": [s.id for s in self.private_subnets.values()],
                "publicSubnetIds": [s.id for s in self.public_subnets.values()],
            }
        )

    def _public(self, name, spec, plan, tags, child) -> aws.ec2.InternetGateway:
        """Public subnets (for load balancers and the NAT) routed through an internet gateway."""
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=self.vpc.id, tags=tags, opts=child)
        public_rt = aws.ec2.RouteTable(
            f"{name}-public-rt",
            vpc_id=self.vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            tags=tags,
            opts=child,
        )
        self.public_subnets: dict[str, aws.ec2.Subnet] = {}
        for i, (zone, cidr) in enumerate(plan["public"].items()):
            subnet = aws.ec2.Subnet(
                f"{name}-public-{i}",
                vpc_id=self.vpc.id,
                cidr_block=cidr,
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags={**tags, "kubernetes.io/role/elb": "1", "Name": f"{spec.name}-public-{zone}"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{i}", subnet_id=subnet.id, route_table_id=public_rt.id, opts=child
            )
            self.public_subnets[zone] = subnet
        return igw

    def _private(self, name, spec, plan, tags, igw, child) -> None:
        """Private subnets, where every node lives, leaving through one NAT gateway."""
        # One NAT gateway: node egress (images, the EKS API) is light; a second costs money.
        eip = aws.ec2.Eip(f"{name}-nat-ip", domain="vpc", tags=tags, opts=child)
        nat = aws.ec2.NatGateway(
            f"{name}-nat",
            allocation_id=eip.id,
            subnet_id=self.public_subnets[self.zones[0]].id,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
        )
        private_rt = aws.ec2.RouteTable(
            f"{name}-private-rt",
            vpc_id=self.vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
            tags=tags,
            opts=child,
        )
        self.private_subnets: dict[str, aws.ec2.Subnet] = {}
        for i, (zone, cidr) in enumerate(plan["private"].items()):
            subnet = aws.ec2.Subnet(
                f"{name}-private-{i}",
                vpc_id=self.vpc.id,
                cidr_block=cidr,
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags={
                    **tags,
                    "kubernetes.io/role/internal-elb": "1",
                    "Name": f"{spec.name}-private-{zone}",
                },
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{i}", subnet_id=subnet.id, route_table_id=private_rt.id, opts=child
            )
            self.private_subnets[zone] = subnet

    def subnet_for(self, zone: str | None) -> aws.ec2.Subnet:
        return self.private_subnets[zone or self.zones[0]]
