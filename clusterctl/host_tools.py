"""The host programs the sandbox runs, each with the Debian package that brings it: the one list
`clusterctl doctor` reports, `sandbox up` checks before it starts, and the README's first command
and `.ci/run` install (tests/cli/test_doctor.py holds both to it; tests/unit/sandbox/
test_host_tools.py holds it to the programs the sandbox's code runs). Standard library only."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HostTool:
    name: str
    """A program on PATH (or in /usr/sbin, /sbin), or an absolute path to a file."""
    package: str
    """The Debian 12/13 package that brings it."""
    why: str
    essential: bool = False
    """Debian installs its package everywhere (Essential: yes): no install line names it."""


HOST_TOOLS: tuple[HostTool, ...] = (
    HostTool("systemd-nspawn", "systemd-container", "the sandbox's nodes run in containers"),
    HostTool("mmdebstrap", "mmdebstrap", "builds the sandbox's node image"),
    HostTool(
        "/usr/share/keyrings/debian-archive-keyring.gpg",
        "debian-archive-keyring",
        "mmdebstrap checks the Debian archive with it",
    ),
    HostTool("gpg", "gpg", "signs the sandbox's apt archive stand-in"),
    HostTool("gpgconf", "gpg", "stops the gpg-agent that signing started (gpg depends on it)"),
    HostTool("openssl", "openssl", "the github.com stand-in's TLS certificate"),
    HostTool("git", "git", "the github.com stand-in serves git over smart HTTP"),
    HostTool("zstd", "zstd", "the apt stand-in's .debs are zstd-compressed, as Ubuntu's"),
    HostTool("ip", "iproute2", "the sandbox's network namespaces and links"),
    HostTool("ssh", "openssh-client", "reaches the sandbox's scheduler as the admin user"),
    HostTool("ssh-keygen", "openssh-client", "the sandbox's admin key"),
    HostTool("sfdisk", "fdisk", "partitions the sandbox nodes' data disks"),
    HostTool("tc", "iproute2", "the sandbox's link faults (slow links)"),
    HostTool("losetup", "mount", "the sandbox nodes' disks are loop devices"),
    HostTool("mount", "mount", "overlay roots and bind mounts of the nodes"),
    HostTool("umount", "mount", "`down` releases the nodes' mounts"),
    HostTool("mkfs.ext4", "e2fsprogs", "formats the nodes' disks"),
    HostTool("nsenter", "util-linux", "runs a command inside a node", essential=True),
    HostTool("partx", "util-linux", "reads a disk image's partitions", essential=True),
    HostTool("chroot", "coreutils", "runs the image build's steps in its root", essential=True),
    HostTool("rm", "coreutils", "removes the nodes' folders", essential=True),
    HostTool("sh", "dash", "runs shell steps", essential=True),
    HostTool("tar", "tar", "unpacks the vendored sources", essential=True),
    HostTool("dpkg-deb", "dpkg", "builds the apt stand-in's packages", essential=True),
    HostTool(
        "dpkg", "dpkg", "compares versions: which sid libraries sid's Slurm needs", essential=True
    ),
)


def found_at(name: str) -> str | None:
    """Where the program (or file) is: PATH, then /usr/sbin and /sbin; None when absent."""
    if name.startswith("/"):
        return name if Path(name).is_file() else None
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return shutil.which(name, path=path)


def missing() -> list[HostTool]:
    return [t for t in HOST_TOOLS if found_at(t.name) is None]


def missing_lines(tools: list[HostTool]) -> list[str]:
    """One line per missing tool, and the install line for all of them."""
    lines = [f"{t.name} is missing ({t.why}); it comes with {t.package}" for t in tools]
    packages = " ".join(dict.fromkeys(t.package for t in tools))
    return [*lines, f"install them: sudo apt-get install {packages}"] if tools else []
