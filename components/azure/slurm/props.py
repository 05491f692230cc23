"""What the Azure Slurm node components build from: one small frozen props object per component,
made once per run from the spec by `slurm_node_props` (called by AzureSlurmCluster, where the
spec enters the Azure Slurm program). SchedulerNode, LoginNode and GpuPartition read only these:
they neither import nor receive ClusterSpec, so what a node depends on is what its props name
(the pattern of Data Safe Haven's `*Props` classes beside each Pulumi component).

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
from clusterctl.render.storage import scheduler_disk_gib
from clusterctl.render.user_data import UserDataPlan, login_role, plan_user_data
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.defaults import head_sku, login_count, login_host, login_sku
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
