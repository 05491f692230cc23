"""The platforms: one object per cloud and per scheduler answering what differs between them, and
the one table of what a platform does not support, which makes every "not supported on X" message.

Code asks these objects (`cloud_of(spec.cloud).quota_preflight`, `scheduler_of(...).head_node`)
instead of comparing `spec.cloud == "azure"`; a new cloud or scheduler is one entry here plus
its components. Standard library only: every layer may import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar


@dataclass(frozen=True)
class Cloud:
    name: str
    title: str
    image_word: str
    """What a partition's `image` is on this cloud (an Azure URN, an AWS AMI id)."""
    image_example: str
    kubernetes_service: str
    """The managed Kubernetes (`aks`, `eks`): the key of versions.yaml `kubernetes`."""
    quota_preflight: bool
    """`up` asks the cloud for sizes and quota first; `plan` says it did not."""
    gpu_scale_sets: bool
    """GPU nodes are VM scale sets of at most one placement group (one InfiniBand fabric)."""
    kubernetes_node_image: str
    """What a Kubernetes GPU node boots (a partition's own `image` is refused there)."""
    kubernetes_admin_principals: bool
    """Cluster admins are named by the stack (EKS access entries: kubernetes.adminPrincipalArns);
    otherwise they come from the cloud login (AKS with Entra ID)."""
    kubernetes_driver_in_image: bool
    """The Kubernetes GPU node image carries the NVIDIA driver and container toolkit (the EKS
    NVIDIA AMI); otherwise the GPU Operator installs them (AKS with gpuProfile.driver None)."""
    kubernetes_default_storage_class: bool
    """The stack makes the default StorageClass (EKS, where none is marked default since 1.30:
    a claim without a class never binds); otherwise the cloud ships one (AKS: managed-csi)."""
    kubernetes_autoscaler_release: bool
    """The cluster autoscaler is a Helm release of the stack (EKS); otherwise the cloud runs it
    for each node pool that has autoscaling on (AKS)."""
    kubernetes_services: tuple[str, ...] = ()
    """config/services.yaml keys a Kubernetes cluster of this cloud bills by the hour besides its
    nodes, idle or not: plan's cost lines."""
    kubernetes_spot_taint: tuple[str, str, str] | None = None
    """(key, value, effect) of the taint the cloud puts on every spot node of a pool, or None
    where spot nodes are untainted (EKS managed node groups)."""


@dataclass(frozen=True)
class Scheduler:
    name: str
    title: str
    head_node: bool
    """A VM of the toolkit's own runs the scheduler (slurmctld); Kubernetes has system nodes."""
    head_role: str
    power_saving: bool
    """Idle GPU nodes are deallocated and started again for a job (Slurm's power saving)."""


CLOUDS = {
    "azure": Cloud(
        "azure",
        "Azure",
        "URN or gallery image version id",
        "publisher:offer:sku:version, or /subscriptions/.../galleries/G/images/I/versions/V",
        "aks",
        True,
        True,
        kubernetes_node_image="AKS Ubuntu node image",
        kubernetes_admin_principals=False,
        kubernetes_driver_in_image=False,
        kubernetes_default_storage_class=False,
        kubernetes_autoscaler_release=False,
        # AKS taints every node of a Spot pool (MicrosoftDocs azure-aks-docs
        # articles/aks/spot-node-pool.md): a pod without the toleration never lands.
        kubernetes_spot_taint=("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule"),
        # AKS's Free tier control plane costs nothing; its load balancer and outbound IP do
        kubernetes_services=("aksLoadBalancer", "aksOutboundIp"),
    ),
    "aws": Cloud(
        "aws",
        "AWS",
        "id",
        "ami-0abc...",
        "eks",
        False,
        False,
        kubernetes_node_image="EKS AL2023 NVIDIA AMI",
        kubernetes_admin_principals=True,
        kubernetes_driver_in_image=True,
        kubernetes_default_storage_class=True,
        kubernetes_autoscaler_release=True,
        kubernetes_services=("eksControlPlane",),
    ),
}
NAT_EGRESS = {("azure", "slurm"), ("aws", "kubernetes")}
"""The cluster kinds whose stack gives the nodes' subnets one NAT gateway with one static public
IP as their only way out (components/azure/slurm/network.py, components/aws/vpc.py)."""


def nat_egress(cloud: str, scheduler: str) -> bool:
    return (cloud, scheduler) in NAT_EGRESS


DISK_BACKUP = {("azure", "slurm")}
"""The cluster kinds whose head node's data disk has a scheduled backup (storage.backup:
components/azure/slurm/disk_backup.py)."""


def disk_backup(cloud: str, scheduler: str) -> bool:
    return (cloud, scheduler) in DISK_BACKUP


SCHEDULERS = {
    "slurm": Scheduler("slurm", "Slurm", True, "scheduler", True),
    "kubernetes": Scheduler("kubernetes", "Kubernetes", False, "system", False),
}

ANY = "*"
UNSUPPORTED: dict[tuple[str, str, str], str] = {
    # (feature, cloud or ANY, scheduler or ANY): what to do instead
    ("clusters", "aws", "slurm"): "use cloud: azure for Slurm, or scheduler: kubernetes on aws",
    ("zones and capacity reservations", "azure", ANY): (
        "they are AWS options; Azure scale sets for InfiniBand stay in one placement group"
    ),
    ("arm64 GPU nodes", "aws", "kubernetes"): (
        "the EKS GPU node group uses the AL2023_x86_64_NVIDIA AMI"
    ),
    ("arm64 GPU nodes", "azure", "kubernetes"): (
        "the AKS GPU node pool and its add-ons are set up for x86_64 nodes only"
    ),
    ("shared Lustre file systems", "azure", "kubernetes"): (
        "the AKS cluster runs in the VNet AKS makes itself (Azure CNI overlay), and Azure Managed "
        "Lustre needs a subnet of its own (at least /24) in a VNet the nodes reach, which the "
        "stack does not build yet; remove kubernetes.sharedFilesystem (FSx for Lustre on EKS works)"
    ),
    ("NVLink domains across nodes", ANY, "kubernetes"): (
        "IMEX channels for multi-node NVLink (NVIDIA's DRA ComputeDomain) are not set up; use "
        "scheduler: slurm"
    ),
}


def cloud_of(name: str) -> Cloud:
    return CLOUDS[name]


def scheduler_of(name: str) -> Scheduler:
    return SCHEDULERS[name]


def unsupported(feature: str, cloud: str, scheduler: str) -> str | None:
    """The one-line "not supported" message for `feature` on this platform, or None."""
    for c, s in ((cloud, scheduler), (cloud, ANY), (ANY, scheduler)):
        reason = UNSUPPORTED.get((feature, c, s))
        if reason is not None:
            names = (
                CLOUDS[cloud].title if c != ANY else "",
                SCHEDULERS[s].title if s != ANY else "",
            )
            return f"{feature} are not supported on {' '.join(n for n in names if n)} yet: {reason}"
    return None


F = TypeVar("F", bound=Callable)


def only_on(cloud: str = ANY, scheduler: str = ANY) -> Callable[[F], F]:
    """Mark a spec rule (or any per-platform function) as applying only on this platform: the
    rule runner skips it elsewhere, so its body never asks which cloud or scheduler it is on."""

    def mark(fn: F) -> F:
        fn.platform = (cloud, scheduler)  # type: ignore[attr-defined]
        return fn

    return mark


def applies(fn: Callable, cloud: str, scheduler: str) -> bool:
    """Whether `fn` (marked with only_on, or not at all) applies on this platform."""
    c, s = getattr(fn, "platform", (ANY, ANY))
    return c in (ANY, cloud) and s in (ANY, scheduler)
