"""Where /home comes from on every node: the scheduler's NFS export or an Azure Files NFS share.

The share's mount follows Microsoft's instructions for NFS Azure file shares
(MicrosoftDocs/azure-docs articles/storage/files/storage-files-how-to-mount-nfs-shares.md: `mount -t
nfs ACCOUNT.file.core.windows.net:/ACCOUNT/SHARE ... -o vers=4,minorversion=1,sec=sys,nconnect=4`);
the account name is made at deploy time (components/azure/slurm/files_share.py): `plan` shows a
placeholder.
"""

from __future__ import annotations

from clusterctl.render.paths import nfsd_threads
from clusterctl.render.templates import render_template
from clusterctl.spec.defaults import login_count, scheduler_disk_gib, uses_files_share
from clusterctl.spec.model import ClusterSpec

__all__ = ["scheduler_disk_gib", "uses_files_share"]  # their home is spec.defaults (cost uses them)

FILES_SHARE = "home"
FILES_MOUNT_OPTIONS = "vers=4,minorversion=1,sec=sys,nconnect=4"
FILES_ACCOUNT_PLACEHOLDER = "gpuclfilesmadeatdeploy"
"""What `plan` shows for the storage account name (3-24 lowercase letters and digits)."""
FILES_HOST_SUFFIX = ".file.core.windows.net"


def files_home_source(account: str) -> str:
    return f"{account}{FILES_HOST_SUFFIX}:/{account}/{FILES_SHARE}"


def home_source_pattern(spec: ClusterSpec, scheduler: str) -> str:
    """The mount source NHC expects for /home (a glob: the account is named at deploy time)."""
    if uses_files_share(spec):
        return files_home_source("*")
    return f"{scheduler}:/shared/home"


NFSD_CONF = "/etc/nfs.conf.d/50-gpu-clusters.conf"
"""nfs.conf(5) reads /etc/nfs.conf.d/*.conf after /etc/nfs.conf."""


def scheduler_nfsd_threads(spec: ClusterSpec) -> int:
    """For the scheduler's NFS clients: the GPU and login nodes."""
    return nfsd_threads(spec.total_nodes + login_count(spec))


def render_nfsd_conf(spec: ClusterSpec) -> str:
    """Written by cloud-init at boot and by the config sync on a resize, byte for byte the same."""
    return f"[nfsd]\nthreads={scheduler_nfsd_threads(spec)}\n"


RESTORE_MOUNT = "/mnt/restore"
RESTORE_LUN = 1
"""The data disk is LUN 0 (components/azure/slurm/scheduler_node.py); a restored copy takes 1."""


def render_restore_script(spec: ClusterSpec, stack: str) -> str:
    """The restore procedure for the data disk's backups (storage.backup), as one script."""
    # what writes to /shared: stopped for a rollback, started again in the reverse order
    services = ["slurmctld"] + (["slurmdbd", "mariadb"] if spec.head_node.accounting else [])
    services.append("prometheus")
    return render_template(
        "scripts/restore-shared.sh.j2",
        cluster=spec.name,
        stack=stack,
        files_home=uses_files_share(spec),
        resource_group=f"rg-{spec.name}-{stack}",
        snapshot_group=f"rg-{spec.name}-{stack}-snapshots",
        restore_disk=f"{spec.name}-shared-restored",
        lun=RESTORE_LUN,
        device=f"/dev/disk/azure/scsi1/lun{RESTORE_LUN}",
        mount=RESTORE_MOUNT,
        services=[*services, "nfs-server"],
    )
