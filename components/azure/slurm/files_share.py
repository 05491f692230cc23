"""AzureFilesShare: /home on a premium Azure Files NFS 4.1 share (storage.kind azure-files-nfs).

A FileStorage account (NFS needs the premium tier) with one NFS share, reachable only through a
private endpoint in the compute subnet: public network access disabled, the account firewall
denying everything, no shared-key or blob public access. The share's name resolves inside the VNet
through the `privatelink.file.core.windows.net` zone linked to it. Secure transfer (HTTPS only) is
off because NFS 4.1 shares refuse to be mounted with it on; NFS traffic never leaves the VNet's
private endpoint. The account and share are protected like the scheduler's data disk
(storage.keepOnDestroy). Sources: MicrosoftDocs/azure-docs articles/storage/files/
storage-files-quick-create-use-linux.md (premium FileStorage account, secure transfer off for NFS)
and storage-files-how-to-mount-nfs-shares.md (mount options).
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure
import pulumi_random as random

from components.azure.slurm.network import AzureNetwork
from components.azure.slurm.props import FilesShareProps

PRIVATE_ZONE = "privatelink.file.core.windows.net"
ACCOUNT_PREFIX = "gpucl"
ACCOUNT_SUFFIX_CHARS = 19
"""Storage account names are 3-24 lowercase letters and digits, unique across Azure."""


class AzureFilesShare(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        props: FilesShareProps,
        *,
        network: AzureNetwork,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:FilesShare", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        kept = pulumi.ResourceOptions(parent=self, protect=props.keep)
        tags = dict(props.tags)
        rg = network.resource_group.name
        suffix = random.RandomString(
            f"{name}-account-suffix",
            length=ACCOUNT_SUFFIX_CHARS,
            upper=False,
            special=False,
            opts=child,
        )
        self.account = azure.storage.StorageAccount(
            f"{name}-account",
            account_name=pulumi.Output.concat(ACCOUNT_PREFIX, suffix.result),
            resource_group_name=rg,
            location=props.region,
            kind="FileStorage",
            sku=azure.storage.SkuArgs(name="Premium_LRS"),
            enable_https_traffic_only=False,
            public_network_access="Disabled",
            network_rule_set=azure.storage.NetworkRuleSetArgs(default_action="Deny", bypass="None"),
            allow_blob_public_access=False,
            allow_shared_key_access=False,
            minimum_tls_version="TLS1_2",
            tags=tags,
            opts=kept,
        )
        self.account_name: pulumi.Output[str] = self.account.name
        self.share = azure.storage.FileShare(
            f"{name}-share",
            account_name=self.account.name,
            resource_group_name=rg,
            share_name=props.share_name,
            enabled_protocols="NFS",
            root_squash="NoRootSquash",
            share_quota=props.size_gib,
            opts=kept,
        )
        self.zone = azure.privatedns.PrivateZone(
            f"{name}-zone",
            private_zone_name=PRIVATE_ZONE,
            resource_group_name=rg,
            location="Global",
            tags=tags,
            opts=child,
        )
        self.zone_link = azure.privatedns.VirtualNetworkLink(
            f"{name}-zone-link",
            private_zone_name=self.zone.name,
            resource_group_name=rg,
            location="Global",
            virtual_network=azure.privatedns.SubResourceArgs(id=network.vnet.id),
            registration_enabled=False,
            tags=tags,
            opts=child,
        )
        self.endpoint = azure.network.PrivateEndpoint(
            f"{name}-endpoint",
            resource_group_name=rg,
            location=props.region,
            subnet=azure.network.SubnetArgs(id=network.compute_subnet.id),
            private_link_service_connections=[
                azure.network.PrivateLinkServiceConnectionArgs(
                    name="file",
                    private_link_service_id=self.account.id,
                    group_ids=["file"],
                )
            ],
            tags=tags,
            opts=child,
        )
        self.dns_group = azure.network.PrivateDnsZoneGroup(
            f"{name}-dns",
            private_endpoint_name=self.endpoint.name,
            resource_group_name=rg,
            private_dns_zone_group_name="default",
            private_dns_zone_configs=[
                azure.network.PrivateDnsZoneConfigArgs(
                    name="file", private_dns_zone_id=self.zone.id
                )
            ],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.zone_link]),
        )
        self.register_outputs({"accountName": self.account.name, "shareName": props.share_name})
