"""Defaults the spec leaves open: the head node's and the jump host's VM types."""

from __future__ import annotations

from clusterctl.platform import cloud_of, scheduler_of
from clusterctl.spec.model import ClusterSpec

JUMP_HOST_SKU = "Standard_D4s_v5"


def head_sku(spec: ClusterSpec) -> str:
    return spec.head_node.sku or cloud_of(spec.cloud).default_head_sku


def login_count(spec: ClusterSpec) -> int:
    """Login nodes: as set, else one on a team cluster (users declared), so the scheduler,
    which holds the power identity, takes no user logins."""
    if spec.login_nodes.count is not None:
        return spec.login_nodes.count
    return 1 if spec.users else 0


def login_sku(spec: ClusterSpec) -> str:
    return spec.login_nodes.sku or head_sku(spec)


def login_host(spec: ClusterSpec, index: int) -> str:
    """A login node's hostname (computerName): <cluster>-login-<n>, from 1."""
    return f"{spec.name}-login-{index + 1}"


def uses_files_share(spec: ClusterSpec) -> bool:
    return scheduler_of(spec.scheduler).head_node and spec.storage.kind == "azure-files-nfs"


SCHEDULER_DISK_WITH_FILES_GIB = 128
"""The scheduler's data disk when /home is on the share: /sched, slurmctld's state, MariaDB."""


def scheduler_disk_gib(spec: ClusterSpec) -> int:
    """storage.sizeGib sizes whatever holds /home: the scheduler's disk or the share."""
    return SCHEDULER_DISK_WITH_FILES_GIB if uses_files_share(spec) else spec.storage.size_gib
