"""Where /home comes from on every node: the scheduler's NFS export or an Azure Files NFS share.

The share's mount follows Microsoft's instructions for NFS Azure file shares
(MicrosoftDocs/azure-docs articles/storage/files/storage-files-how-to-mount-nfs-shares.md: `mount -t
nfs ACCOUNT.file.core.windows.net:/ACCOUNT/SHARE ... -o vers=4,minorversion=1,sec=sys,nconnect=4`);
the account name is made at deploy time (components/azure/slurm/files_share.py): `plan` shows a
placeholder.
"""

from __future__ import annotations

from clusterctl.platform import scheduler_of
from clusterctl.render.paths import nfsd_threads
from clusterctl.spec.defaults import login_count
from clusterctl.spec.model import ClusterSpec

FILES_SHARE = "home"
FILES_MOUNT_OPTIONS = "vers=4,minorversion=1,sec=sys,nconnect=4"
FILES_ACCOUNT_PLACEHOLDER = "gpuclfilesmadeatdeploy"
"""What `plan` shows for the storage account name (3-24 lowercase letters and digits)."""
FILES_HOST_SUFFIX = ".file.core.windows.net"


def uses_files_share(spec: ClusterSpec) -> bool:
    return scheduler_of(spec.scheduler).head_node and spec.storage.kind == "azure-files-nfs"


def files_home_source(account: str) -> str:
    return f"{account}{FILES_HOST_SUFFIX}:/{account}/{FILES_SHARE}"


def home_source_pattern(spec: ClusterSpec, scheduler: str) -> str:
    """The mount source NHC expects for /home (a glob: the account is named at deploy time)."""
    if uses_files_share(spec):
        return files_home_source("*")
    return f"{scheduler}:/shared/home"


SCHEDULER_DISK_WITH_FILES_GIB = 128
"""The scheduler's data disk when /home is on the share: /sched, slurmctld's state, MariaDB."""


def scheduler_disk_gib(spec: ClusterSpec) -> int:
    """storage.sizeGib sizes whatever holds /home: the scheduler's disk or the share."""
    return SCHEDULER_DISK_WITH_FILES_GIB if uses_files_share(spec) else spec.storage.size_gib


NFSD_CONF = "/etc/nfs.conf.d/50-gpu-clusters.conf"
"""nfs.conf(5) reads /etc/nfs.conf.d/*.conf after /etc/nfs.conf."""


def scheduler_nfsd_threads(spec: ClusterSpec) -> int:
    """For the scheduler's NFS clients: the GPU and login nodes."""
    return nfsd_threads(spec.total_nodes + login_count(spec))


def render_nfsd_conf(spec: ClusterSpec) -> str:
    """Written by cloud-init at boot and by the config sync on a resize, byte for byte the same."""
    return f"[nfsd]\nthreads={scheduler_nfsd_threads(spec)}\n"
