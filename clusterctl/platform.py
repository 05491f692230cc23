"""The platforms: a cloud (clusterctl/clouds/, one module each) times a scheduler (here), and the
one lookup of what a platform does not support, which makes every "not supported on X" message.

Code asks these objects (`cloud_of(spec.cloud).quota_preflight`, `scheduler_of(...).head_node`)
instead of comparing `spec.cloud == "azure"`; a new cloud is a new module in clusterctl/clouds/
plus its components. Every layer may import it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from clusterctl.clouds import ANY, Feature, cloud_of


@dataclass(frozen=True)
class Scheduler:
    name: str
    title: str
    head_node: bool
    """A VM of the toolkit's own runs the scheduler (slurmctld); Kubernetes has system nodes."""
    head_role: str
    power_saving: bool
    """Idle GPU nodes are deallocated and started again for a job (Slurm's power saving)."""
    unsupported: Mapping[Feature, str] = field(default_factory=dict)
    """Features no cloud has with this scheduler -> what to do instead."""
    node_group: str = "partition"
    """What a `partitions[]` entry is called to the user: a Slurm partition, a node pool."""
    gpu_resources: bool = False
    """Jobs ask for GPUs (and slices of them) as extended resources of the NVIDIA device plugin
    (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`); otherwise as Slurm GRES (`--gres=`)."""
    partition_flag: str | None = "--partition NAME"
    """How `validate --nccl` is pointed at another partition; None: it always runs on the
    default one."""


SCHEDULERS = {
    "slurm": Scheduler("slurm", "Slurm", True, "scheduler", True),
    "kubernetes": Scheduler(
        "kubernetes",
        "Kubernetes",
        False,
        "system",
        False,
        unsupported={
            Feature.MULTI_NODE_NVLINK: (
                "IMEX channels for multi-node NVLink (NVIDIA's DRA ComputeDomain) are not set "
                "up; use scheduler: slurm"
            ),
        },
        node_group="node pool",
        gpu_resources=True,
        partition_flag=None,
    ),
}


def nat_egress(cloud: str, scheduler: str) -> bool:
    """The stack gives the nodes' subnets one NAT gateway with one static public IP as their only
    way out (components/azure/slurm/network.py, components/aws/vpc.py)."""
    return scheduler in cloud_of(cloud).nat_egress


def disk_backup(cloud: str, scheduler: str) -> bool:
    """The head node's data disk has a scheduled backup (storage.backup:
    components/azure/slurm/disk_backup.py)."""
    return scheduler in cloud_of(cloud).disk_backup


def scheduler_of(name: str) -> Scheduler:
    return SCHEDULERS[name]


def unsupported(feature: Feature, cloud: str, scheduler: str) -> str | None:
    """The one-line "not supported" message for `feature` on this platform, or None."""
    on_cloud = cloud_of(cloud).unsupported
    for reason, names in (
        (on_cloud.get((feature, scheduler)), (cloud_of(cloud).title, SCHEDULERS[scheduler].title)),
        (on_cloud.get((feature, ANY)), (cloud_of(cloud).title,)),
        (SCHEDULERS[scheduler].unsupported.get(feature), (SCHEDULERS[scheduler].title,)),
    ):
        if reason is not None:
            return f"{feature.value} are not supported on {' '.join(names)} yet: {reason}"
    built = cloud_of(cloud).clusters
    if feature is Feature.CLUSTERS and scheduler not in built:
        titles = (cloud_of(cloud).title, SCHEDULERS[scheduler].title)
        choose = " or ".join(f"scheduler: {s}" for s in built)
        return f"{feature.value} are not supported on {' '.join(titles)} yet: use {choose}"
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
