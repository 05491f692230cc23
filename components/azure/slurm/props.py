"""What the Azure Slurm components build from: one small frozen props object per component, made
once per run from the spec by `slurm_node_props` and `slurm_base_props` (called by
AzureSlurmCluster, where the spec enters the Azure Slurm program). The node components
(SchedulerNode, LoginNode, GpuPartition) and the ones around them (AzureNetwork, ClusterSecrets,
JumpHost, AzureFilesShare, SharedDiskBackup) read only these: they neither import nor receive
ClusterSpec, so what a component depends on is what its props name (the pattern of Data Safe
Haven's `*Props` classes beside each Pulumi component).

The user-data is rendered once per run with placeholders for its deploy-time secrets (munge
key, database password, storage account, identity; clusterctl/render/user_data.py), which are
known only as Outputs resolve. `UserData` is bound here to the role's rendered user-data, so a
component hands it the secrets alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any

from clusterctl.render.cloud_init import azure_custom_data
from clusterctl.render.roles import SCHEDULER, SlurmPlan
from clusterctl.render.site import scheduler_host
from clusterctl.render.storage import FILES_SHARE, scheduler_disk_gib
from clusterctl.render.user_data import UserDataPlan, login_role, plan_user_data
from clusterctl.spec.addressing import subnet_plan
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.defaults import JUMP_HOST_SKU, head_sku, login_count, login_host, login_sku
from clusterctl.spec.lustre import amlfs_sku
from clusterctl.spec.model import ClusterSpec, PartitionSpec
from clusterctl.spec.tags import cloud_tags
from clusterctl.spec.topology import ScaleSet, scale_sets_of
from components.azure.slurm.images import image_reference

UserData = Callable[..., str]
"""A role's osProfile.customData (gzipped, base64) from its deploy-time secrets, given as
UserDataPlan.filled's keywords (munge_key_b64=, db_password=, files_account=, ...)."""


@dataclass(frozen=True)
class VmProps:
    """What every cluster VM (or scale set) is made of."""

    region: str
    admin_user: str
    vm_size: str
    image: Mapping[str, str]
    """The imageReference: a marketplace URN's parts or a gallery image version id."""
    tags: Mapping[str, str]
    user_data: UserData


@dataclass(frozen=True)
class SchedulerProps:
    vm: VmProps
    computer_name: str
    public_ip: bool
    """A static public IP on its NIC (ssh.access direct)."""
    data_disk_gib: int
    keep_data_disk: bool
    """storage.keepOnDestroy: the data disk (/home, /sched) is protected."""
    storage_tags: Mapping[str, str]


@dataclass(frozen=True)
class LoginProps:
    vm: VmProps
    computer_name: str
    public_ip: bool
    entra_group: str | None
    """loginNodes.entraIdGroup: its members log in with their Entra accounts."""


@dataclass(frozen=True)
class PartitionProps:
    vm: VmProps
    partition: str
    cluster: str
    """The cluster's name, part of each scale set's Azure name (ScaleSet.vm_set_name)."""
    scale_sets: tuple[ScaleSet, ...]
    spot: bool


@dataclass(frozen=True)
class SlurmNodeProps:
    scheduler: SchedulerProps
    logins: tuple[LoginProps, ...]
    partitions: tuple[PartitionProps, ...]
    """In the spec's order."""


@dataclass(frozen=True)
class NetworkProps:
    region: str
    resource_group: str
    """The cluster's resource group's name, rg-<name>-<stack>."""
    address_space: str
    scheduler_subnet: str
    compute_subnet: str
    ssh_allowed_cidrs: tuple[str, ...]
    """ssh.allowedCidrs: the only sources SSH is admitted from (none: no SSH rule)."""
    tags: Mapping[str, str]


@dataclass(frozen=True)
class SecretsProps:
    public_key: str | None
    """ssh.publicKey; None: a key pair is made."""
    accounting: bool
    """headNode.accounting: slurmdbd's database password is made."""


@dataclass(frozen=True)
class JumpHostProps:
    region: str
    vm_size: str
    admin_user: str
    computer_name: str
    image: Mapping[str, str]
    tags: Mapping[str, str]


@dataclass(frozen=True)
class FilesShareProps:
    region: str
    share_name: str
    """The NFS share's name, the one every role mounts /home from (render/storage.py)."""
    size_gib: int
    keep: bool
    """storage.keepOnDestroy: the account and the share are protected."""
    tags: Mapping[str, str]


@dataclass(frozen=True)
class DiskBackupProps:
    region: str
    snapshot_group: str
    """The snapshots' resource group, rg-<name>-<stack>-snapshots (Microsoft Learn recommends a
    resource group of their own)."""
    friendly_name: str
    hour_utc: int
    retention_days: int
    keep: bool
    """storage.keepOnDestroy: what holds or makes the snapshots is protected."""
    tags: Mapping[str, str]


@dataclass(frozen=True)
class LustreProps:
    """storage.lustre's Azure Managed Lustre file system (managed_lustre.py)."""

    region: str
    subnet: str
    """Its own subnet's address prefix (spec/addressing.py)."""
    sku: str
    size_tib: int
    maintenance_day: str
    maintenance_time_utc: str
    zone: str | None
    keep: bool
    """storage.lustre.keepOnDestroy: the file system is protected."""
    tags: Mapping[str, str]


@dataclass(frozen=True)
class SlurmBaseProps:
    """What the components around the nodes build from."""

    network: NetworkProps
    secrets: SecretsProps
    jump_host: JumpHostProps
    files_share: FilesShareProps
    disk_backup: DiskBackupProps
    lustre: LustreProps | None
    """None: the stack has no storage.lustre."""


def slurm_base_props(spec: ClusterSpec, stack: str) -> SlurmBaseProps:
    """The network's, the secrets', the jump host's, the Azure Files share's and the disk
    backup's props, from the spec once (each built by AzureSlurmCluster only when the spec asks
    for it)."""
    subnets = subnet_plan(spec)

    def tags(**extra: str) -> Mapping[str, str]:
        return MappingProxyType(cloud_tags(spec, stack, **extra))

    storage = tags(**{"gpu-clusters:role": "storage"})
    keep = spec.storage.keep_on_destroy
    return SlurmBaseProps(
        network=NetworkProps(
            region=spec.region,
            resource_group=f"rg-{spec.name}-{stack}",
            address_space=spec.network.address_space,
            scheduler_subnet=subnets["scheduler"],
            compute_subnet=subnets["compute"],
            ssh_allowed_cidrs=tuple(spec.ssh.allowed_cidrs),
            tags=tags(),
        ),
        secrets=SecretsProps(public_key=spec.ssh.public_key, accounting=spec.head_node.accounting),
        jump_host=JumpHostProps(
            region=spec.region,
            vm_size=JUMP_HOST_SKU,
            admin_user=spec.ssh.admin_user,
            computer_name=f"{spec.name}-jump",
            image=MappingProxyType(image_reference("scheduler", spec.head_node.image)),
            tags=tags(**{"gpu-clusters:role": "jumphost"}),
        ),
        files_share=FilesShareProps(
            region=spec.region,
            share_name=FILES_SHARE,
            size_gib=spec.storage.size_gib,
            keep=keep,
            tags=storage,
        ),
        disk_backup=DiskBackupProps(
            region=spec.region,
            snapshot_group=f"rg-{spec.name}-{stack}-snapshots",
            friendly_name=f"{spec.name}-{stack}-shared",
            hour_utc=spec.storage.backup.hour_utc,
            retention_days=spec.storage.backup.retention_days,
            keep=keep,
            tags=storage,
        ),
        lustre=_lustre_props(spec, subnets, storage),
    )


def _lustre_props(
    spec: ClusterSpec, subnets: Mapping[str, str], tags: Mapping[str, str]
) -> LustreProps | None:
    fs = spec.storage.lustre
    if fs is None:
        return None
    return LustreProps(
        region=spec.region,
        subnet=subnets["lustre"],
        sku=amlfs_sku(fs.throughput_mbps_per_tib),
        size_tib=fs.size_tib,
        maintenance_day=fs.maintenance_day,
        maintenance_time_utc=fs.maintenance_time_utc,
        zone=fs.zone,
        keep=fs.keep_on_destroy,
        tags=tags,
    )


def _custom_data(render: Callable[..., str], **secrets: Any) -> str:
    return azure_custom_data(render(**secrets))


def _user_data(rendered: UserDataPlan, role: str) -> UserData:
    return partial(_custom_data, partial(rendered.filled, role))


def slurm_node_props(
    spec: ClusterSpec,
    stack: str,
    plan: SlurmPlan,
    user_data: UserDataPlan | None = None,
    cat: Catalog | None = None,
) -> SlurmNodeProps:
    """The scheduler's, each login node's and each partition's props, from the spec once;
    `user_data`: each role's, rendered once for this run (rendered here when not given)."""
    cat = cat or catalog()
    rendered = user_data or plan_user_data(spec, stack, plan, cat)
    admin = spec.ssh.admin_user
    direct = spec.ssh.access == "direct"
    head_image = MappingProxyType(image_reference("scheduler", spec.head_node.image))

    def tags(role: str, **extra: str) -> Mapping[str, str]:
        return MappingProxyType(cloud_tags(spec, stack, **{"gpu-clusters:role": role}, **extra))

    scheduler = SchedulerProps(
        vm=VmProps(
            region=spec.region,
            admin_user=admin,
            vm_size=head_sku(spec),
            image=head_image,
            tags=tags("scheduler"),
            user_data=_user_data(rendered, SCHEDULER),
        ),
        computer_name=scheduler_host(spec),
        public_ip=direct,
        data_disk_gib=scheduler_disk_gib(spec),
        keep_data_disk=spec.storage.keep_on_destroy,
        storage_tags=tags("storage"),
    )
    logins = tuple(
        LoginProps(
            vm=VmProps(
                region=spec.region,
                admin_user=admin,
                vm_size=login_sku(spec),
                image=head_image,
                tags=tags("login"),
                user_data=_user_data(rendered, login_role(i)),
            ),
            computer_name=login_host(spec, i),
            public_ip=direct,
            entra_group=spec.login_nodes.entra_id_group,
        )
        for i in range(login_count(spec))
    )
    return SlurmNodeProps(
        scheduler=scheduler,
        logins=logins,
        partitions=tuple(_partition(spec, rendered, p, cat, tags) for p in spec.partitions),
    )


def _partition(
    spec: ClusterSpec,
    rendered: UserDataPlan,
    partition: PartitionSpec,
    cat: Catalog,
    tags: Callable[..., Mapping[str, str]],
) -> PartitionProps:
    sku = cat.get(partition.sku, "azure")
    assert sku is not None  # the spec rules refuse unknown SKUs before any component runs
    image = image_reference("gpuNodes", partition.image, cat.gpu_image(sku))
    return PartitionProps(
        vm=VmProps(
            region=spec.region,
            admin_user=spec.ssh.admin_user,
            vm_size=sku.name,
            image=MappingProxyType(image),
            tags=tags("compute", **{"gpu-clusters:partition": partition.name}),
            user_data=_user_data(rendered, partition.name),
        ),
        partition=partition.name,
        cluster=spec.name,
        scale_sets=tuple(
            scale_sets_of(partition.name, partition.nodes, partition.max_nodes_per_scale_set)
        ),
        spot=partition.spot,
    )
