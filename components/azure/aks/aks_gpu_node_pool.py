"""AksGpuNodePool: one partition as an AKS user node pool of an ND size, on one InfiniBand fabric,
with the GPU driver choice made explicit (AKS-managed, or none and the GPU Operator installs it).
AKS's cluster autoscaler sizes it between minNodes and nodes; the pool's tags (on its scale set)
describe a node for when there is none to look at."""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from clusterctl.spec.catalog import Catalog, Sku
from clusterctl.spec.kubernetes import (
    GPU_TAINT,
    aks_gpu_instance_profile,
    aks_node_template_tags,
    autoscaler_node_template,
    gpu_sku,
    kubernetes_version,
    pool_labels,
    pool_minimum,
)
from clusterctl.spec.model import ClusterSpec, PartitionSpec
from clusterctl.spec.topology import ScaleSet

AGENT_POOL_NAME_MAX = 12
"""Linux node pool names: lowercase letters and digits, at most 12 characters."""

OS_DISK_TYPE = "Ephemeral"
"""Image layers (containerd's root) and emptyDir (the kubelet's root) live on the OS disk. AKS
defaults to an ephemeral OS disk sized to the VM's local temp disk where it fits, and silently
to a network-attached managed disk where it does not (MicrosoftDocs/azure-aks-docs
articles/aks/concepts-storage.md); asking for it makes the node pool fail at creation instead.
So it is asked for only where config/skus.yaml proves the temp disk (resourceDiskGiB with its
source); where the catalog calls the disk unverified (ND H100/H200 v5, GB200 v6) AKS's own
choice stands (os_disk_type; docs/decisions/0007). AKS has no setting for the ND H100/H200 v5
NVMe disks (best-practices-storage-nvme.md); kubeletDiskType=Temporary would move that data to the
same temp disk, already the OS disk's."""


def os_disk_type(sku: Sku) -> str | None:
    """Ephemeral where the catalog proves a temp disk to hold it; None: AKS decides."""
    return OS_DISK_TYPE if sku.resource_disk_gi_b else None


def gpu_driver(spec: ClusterSpec) -> str:
    """AKS installs the driver (`Install`) unless the GPU Operator owns it (`None`): never both,
    the operator's toolkit would override AKS's containerd setup (Azure/aks-rdma-infiniband)."""
    return "None" if spec.kubernetes.gpu_driver == "gpu-operator" else "Install"


def agent_pool_name(part: PartitionSpec, index: int = 0) -> str:
    """The first pool keeps the partition's name (as before pools were split: renaming a pool
    replaces it); the k-th further pool ends in k."""
    if index == 0:
        return part.name[:AGENT_POOL_NAME_MAX]
    suffix = str(index)
    return part.name[: AGENT_POOL_NAME_MAX - len(suffix)] + suffix


class AksGpuNodePool(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        spec: ClusterSpec,
        part: PartitionSpec,
        cat: Catalog,
        *,
        pool: ScaleSet,
        resource_group_name: pulumi.Input[str],
        cluster_name: pulumi.Input[str],
        labels: dict[str, str],
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:AksGpuNodePool", name, None, opts)
        taint = f"{GPU_TAINT['key']}={GPU_TAINT['value']}:{GPU_TAINT['effect']}"
        self.pool = azure.containerservice.AgentPool(
            f"{name}-pool",
            resource_group_name=resource_group_name,
            resource_name_=cluster_name,
            agent_pool_name=agent_pool_name(part, pool.index),
            mode="User",
            type="VirtualMachineScaleSets",
            vm_size=part.sku,
            # The cluster's Kubernetes version: a version bump moves the pool with the control
            # plane (AKS takes "<major>.<minor>" as its newest patch, which the patch channel
            # then follows), instead of nodes staying at the creation-day version.
            orchestrator_version=kubernetes_version(spec, cat),
            # `count` is the autoscaler's from here on: `up` leaves it as it finds it.
            enable_auto_scaling=True,
            min_count=pool_minimum(part, pool),
            max_count=pool.size,
            count=pool_minimum(part, pool),
            os_type="Linux",
            os_sku="Ubuntu",
            os_disk_type=os_disk_type(gpu_sku(part, cat)),
            gpu_profile=azure.containerservice.GPUProfileArgs(driver=gpu_driver(spec)),
            # AKS cuts the GPUs itself only when it installs the driver; with the GPU Operator
            # the MIG manager applies the layout (nvidia.com/mig.config, node_labels).
            gpu_instance_profile=(
                aks_gpu_instance_profile(part, cat) if gpu_driver(spec) == "Install" else None
            ),
            node_labels={**labels, **pool_labels(part, pool)},
            node_taints=[taint],
            enable_node_public_ip=False,
            scale_set_priority="Spot" if part.spot else "Regular",
            # Replace one node at a time; ND VMs are scarce, surge capacity may not exist.
            upgrade_settings=azure.containerservice.AgentPoolUpgradeSettingsArgs(
                max_surge="0", max_unavailable="1"
            ),
            tags={
                **tags,
                **aks_node_template_tags(
                    autoscaler_node_template(part, cat, {**labels, **pool_labels(part, pool)})
                ),
            },
            # "The applied GPU Instance Profile cannot be changed after node pool creation"
            # (MicrosoftDocs aks/gpu-multi-instance.md): a new layout is a new pool.
            opts=pulumi.ResourceOptions(
                parent=self, ignore_changes=["count"], replace_on_changes=["gpuInstanceProfile"]
            ),
        )
        self.register_outputs(
            {"agentPoolName": agent_pool_name(part, pool.index), "gpuDriver": gpu_driver(spec)}
        )
