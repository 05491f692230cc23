"""ManagedLustre: storage.lustre, an Azure Managed Lustre file system for datasets and checkpoints.

It lives in a subnet of its own (Azure puts its servers and the Lustre Management Service
there, and cannot move it later), whose NSG allows Lustre's TCP 988 and 1019-1023 in and out
within the VNet only and denies the Internet; the nodes mount it by the MGS address the file
system reports (clientInfo.mgsAddress). Protected like the scheduler's data disk unless
storage.lustre.keepOnDestroy is false. Sources and numbers: clusterctl/spec/lustre.py.
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from clusterctl.spec.lustre import AMLFS_PORTS
from components.azure.slurm.network import AzureNetwork, deny_internet
from components.azure.slurm.props import LustreProps


class ManagedLustre(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        props: LustreProps,
        *,
        network: AzureNetwork,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:ManagedLustre", name, None, opts)
        fs, tags = props, dict(props.tags)
        rg = network.resource_group.name
        self.nsg = azure.network.NetworkSecurityGroup(
            f"{name}-nsg",
            resource_group_name=rg,
            location=props.region,
            security_rules=[*lustre_rules(), deny_internet(4000)],
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.subnet = azure.network.Subnet(
            f"{name}-subnet",
            resource_group_name=rg,
            virtual_network_name=network.vnet.name,
            address_prefix=props.subnet,
            network_security_group=azure.network.NetworkSecurityGroupArgs(id=self.nsg.id),
            # after the other subnets: Azure rejects concurrent subnet writes on one VNet
            opts=pulumi.ResourceOptions(parent=self, depends_on=[network.compute_subnet]),
        )
        self.file_system = azure.storagecache.AmlFilesystem(
            f"{name}-fs",
            resource_group_name=rg,
            location=props.region,
            sku=azure.storagecache.SkuNameArgs(name=props.sku),
            storage_capacity_ti_b=fs.size_tib,
            filesystem_subnet=self.subnet.id,
            maintenance_window=azure.storagecache.AmlFilesystemMaintenanceWindowArgs(
                day_of_week=fs.maintenance_day, time_of_day_utc=fs.maintenance_time_utc
            ),
            zones=[fs.zone] if fs.zone else None,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, protect=props.keep),
        )
        self.mgs_address: pulumi.Output[str] = self.file_system.client_info.apply(
            lambda info: info.mgs_address if info else ""
        )
        self.register_outputs({"mgsAddress": self.mgs_address, "subnetId": self.subnet.id})


def lustre_rules() -> list[azure.network.SecurityRuleArgs]:
    """Lustre's ports, in and out, between the VNet and the file system's subnet only."""
    return [
        azure.network.SecurityRuleArgs(
            name=f"allow-lustre-{direction.lower()}",
            priority=100,
            direction=direction,
            access="Allow",
            protocol="Tcp",
            source_address_prefix="VirtualNetwork",
            source_port_range="*",
            destination_address_prefix="VirtualNetwork",
            destination_port_ranges=list(AMLFS_PORTS),
            description="Azure Managed Lustre: TCP 988 and 1019-1023 within the VNet",
        )
        for direction in ("Inbound", "Outbound")
    ]
