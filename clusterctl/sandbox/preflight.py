"""What `up` needs from the host, checked before anything is created."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from .state import SandboxError

# program -> Debian package that provides it
REQUIRED = {
    "slurmctld": "slurmctld",
    "slurmd": "slurmd",
    "sinfo": "slurm-client",
    "scontrol": "slurm-client",
    "srun": "slurm-client",
    "munged": "munge",
    "sshd": "openssh-server",
    "ssh": "openssh-client",
    "ssh-keygen": "openssh-client",
    "ip": "iproute2",
    "tc": "iproute2",
    "nsenter": "util-linux",
    "unshare": "util-linux",
    "setpriv": "util-linux",
    "bash": "bash",
}


def check_host() -> None:
    if os.geteuid() != 0:
        raise SandboxError("the sandbox needs root (namespaces, bridges, mknod): run it with sudo")
    missing = [prog for prog in REQUIRED if shutil.which(prog) is None]
    for prog in ("sshd",):  # sbin tools may be off a non-root PATH
        if prog in missing and os.path.exists(f"/usr/sbin/{prog}"):
            missing.remove(prog)
    if missing:
        packages = sorted({REQUIRED[p] for p in missing})
        raise SandboxError(
            f"missing {', '.join(missing)}: run `apt-get install {' '.join(packages)}`"
        )


def check_workdir(workdir: Path) -> None:
    """munged and slurmctld run as the munge and slurm users: they must reach the workdir."""
    for parent in [workdir, *workdir.parents]:
        if parent.exists() and not parent.stat().st_mode & stat.S_IXOTH:
            raise SandboxError(
                f"{parent} is not searchable by other users, so munged/slurmctld cannot reach "
                f"{workdir}: `chmod o+x {parent}` or pick a workdir outside it"
            )
