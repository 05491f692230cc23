"""The controller's sshd: how clusterctl reaches the sandbox scheduler, as it does in the cloud."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .layout import Layout

SSHD_CONFIG = """\
# clusterctl sandbox: key-only root login, listening on the bridge address only
ListenAddress {addr}:22
HostKey {host_key}
PidFile {pid_file}
AuthorizedKeysFile {authorized_keys}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
# A workdir under /tmp (mode 1777) fails StrictModes' parent-dir check; auth stays key-only.
StrictModes no
PrintMotd no
X11Forwarding no
SetEnv SLURM_CONF={slurm_conf}
"""


def keygen(path: Path, comment: str) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
    )


def setup(lay: Layout, addr: str) -> Path:
    """Host key, client key pair, authorized_keys, known_hosts, sshd_config (returned)."""
    host_key = lay.ssh / "ssh_host_ed25519_key"
    keygen(host_key, "clusterctl-sandbox-host")
    keygen(lay.ssh_key, "clusterctl-sandbox")
    (lay.ssh / "authorized_keys").write_text(Path(f"{lay.ssh_key}.pub").read_text())
    (lay.ssh / "authorized_keys").chmod(0o600)
    host_pub = Path(f"{host_key}.pub").read_text().split()
    lay.known_hosts.write_text(f"{addr} {host_pub[0]} {host_pub[1]}\n")
    config = lay.ssh / "sshd_config"
    config.write_text(
        SSHD_CONFIG.format(
            addr=addr,
            host_key=host_key,
            pid_file=lay.run / "sshd.pid",
            authorized_keys=lay.ssh / "authorized_keys",
            slurm_conf=lay.slurm_conf,
        )
    )
    return config


def ssh_argv(lay: Layout, addr: str) -> list[str]:
    """`ssh` to the sandbox controller as root, the way clusterctl reaches a cloud scheduler."""
    return [
        "ssh",
        "-F",
        "/dev/null",
        "-i",
        str(lay.ssh_key),
        "-o",
        f"UserKnownHostsFile={lay.known_hosts}",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=5",
        f"root@{addr}",
    ]
