"""AzureNetwork: resource group, VNet, subnets, NSGs that admit SSH only from allowed CIDRs, and a
NAT gateway with one static public IP as the subnets' only way out.

Azure's implicit default outbound access is not used: Microsoft does not recommend it, the
"Subnets should be private" policy of many landing zones forbids it, and VNets made with network
API 2025-07-01 or later do not get it (subnets default to defaultOutboundAccess false). As
cyclecloud-slurm-workspace and az-hop do, a NAT gateway on both subnets gives every node the same
address out (`egressAddress`, the one to allow in a registry's firewall)."""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from components.azure.slurm.props import NetworkProps
from components.azure.slurm.public_ip import static_public_ip


class AzureNetwork(pulumi.ComponentResource):
    def __init__(self, name: str, props: NetworkProps, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-clusters:azure:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(props.tags)

        self.resource_group = azure.resources.ResourceGroup(
            f"{name}-rg",
            resource_group_name=props.resource_group,
            location=props.region,
            tags=tags,
            opts=child,
        )
        rg = self.resource_group.name
        ssh_rules = _ssh_rules(props.ssh_allowed_cidrs)
        self.scheduler_nsg = azure.network.NetworkSecurityGroup(
            f"{name}-scheduler-nsg",
            resource_group_name=rg,
            location=props.region,
            security_rules=[*ssh_rules, deny_internet(4000)],
            tags=tags,
            opts=child,
        )
        self.compute_nsg = azure.network.NetworkSecurityGroup(
            f"{name}-compute-nsg",
            resource_group_name=rg,
            location=props.region,
            security_rules=[deny_internet(4000)],
            tags=tags,
            opts=child,
        )
        self.egress_ip = static_public_ip(f"{name}-egress-ip", props.region, rg, tags, self)
        self.nat = azure.network.NatGateway(
            f"{name}-nat",
            resource_group_name=rg,
            location=props.region,
            sku={"name": "Standard"},
            public_ip_addresses=[{"id": self.egress_ip.id}],
            idle_timeout_in_minutes=4,
            tags=tags,
            opts=child,
        )
        egress = {
            "nat_gateway": azure.network.SubResourceArgs(id=self.nat.id),
            "default_outbound_access": False,
        }
        self.vnet = azure.network.VirtualNetwork(
            f"{name}-vnet",
            resource_group_name=rg,
            location=props.region,
            address_space=azure.network.AddressSpaceArgs(address_prefixes=[props.address_space]),
            tags=tags,
            # Subnets are their own resources below; azure-native >= 2 leaves them alone on VNet
            # updates (https://github.com/pulumi/pulumi-azure-native/issues/611).
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["subnets"]),
        )
        # defaultOutboundAccess can only be set when a subnet is created (pulumi-azure-native
        # network/subnet.py docstring): on a stack whose subnets predate it, an update to false
        # fails, and a replace cannot delete a subnet its VMs still use. So it is set at creation
        # only; such an older subnet keeps default outbound access but sends its traffic through
        # the NAT gateway, which takes precedence (MicrosoftDocs default-outbound-access.md). A
        # fully private subnet needs the cluster made again (`clusterctl down`, `up`).
        set_at_creation = ["defaultOutboundAccess"]
        self.scheduler_subnet = azure.network.Subnet(
            f"{name}-scheduler-subnet",
            resource_group_name=rg,
            virtual_network_name=self.vnet.name,
            address_prefix=props.scheduler_subnet,
            network_security_group=azure.network.NetworkSecurityGroupArgs(id=self.scheduler_nsg.id),
            **egress,
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=set_at_creation),
        )
        self.compute_subnet = azure.network.Subnet(
            f"{name}-compute-subnet",
            resource_group_name=rg,
            virtual_network_name=self.vnet.name,
            address_prefix=props.compute_subnet,
            network_security_group=azure.network.NetworkSecurityGroupArgs(id=self.compute_nsg.id),
            **egress,
            # One subnet after another: Azure rejects concurrent subnet writes on one VNet.
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[self.scheduler_subnet], ignore_changes=set_at_creation
            ),
        )
        self.register_outputs(
            {
                "resourceGroupName": rg,
                "vnetId": self.vnet.id,
                "schedulerSubnetId": self.scheduler_subnet.id,
                "computeSubnetId": self.compute_subnet.id,
                "egressAddress": self.egress_ip.ip_address,
            }
        )


def deny_internet(priority: int) -> azure.network.SecurityRuleArgs:
    """Explicit deny of everything else from the Internet, visible in the portal and in tests."""
    return azure.network.SecurityRuleArgs(
        name="deny-internet-inbound",
        priority=priority,
        direction="Inbound",
        access="Deny",
        protocol="*",
        source_address_prefix="Internet",
        source_port_range="*",
        destination_address_prefix="*",
        destination_port_range="*",
    )


def _ssh_rules(allowed_cidrs: tuple[str, ...]) -> list[azure.network.SecurityRuleArgs]:
    """SSH in from the stack's allowedCidrs only; none at all when it lists none."""
    return (
        [
            azure.network.SecurityRuleArgs(
                name="allow-ssh-from-allowed-cidrs",
                priority=100,
                direction="Inbound",
                access="Allow",
                protocol="Tcp",
                source_address_prefixes=list(allowed_cidrs),
                source_port_range="*",
                destination_address_prefix="*",
                destination_port_range="22",
                description="SSH only from gpu-clusters:cluster.ssh.allowedCidrs",
            )
        ]
        if allowed_cidrs
        else []
    )
