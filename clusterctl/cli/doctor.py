"""`clusterctl doctor`: what this machine lacks for the sandbox and the cloud path, as `sky check`.

HOST_TOOLS is the one list of the host programs and the Debian package of each; the README's first
command and `.ci/run` install every package in it (tests/cli/test_doctor.py holds them to it).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import typer

from clusterctl.cli.common import JsonOpt, out


@dataclass(frozen=True)
class HostTool:
    name: str
    """A program on PATH (or in /usr/sbin, /sbin), or an absolute path to a file."""
    package: str
    """The Debian 12/13 package that brings it."""
    why: str
    essential: bool = False
    """Debian installs its package everywhere (Priority: required): no install line names it."""


HOST_TOOLS: tuple[HostTool, ...] = (
    HostTool("systemd-nspawn", "systemd-container", "the sandbox's nodes run in containers"),
    HostTool("mmdebstrap", "mmdebstrap", "builds the sandbox's node image"),
    HostTool(
        "/usr/share/keyrings/debian-archive-keyring.gpg",
        "debian-archive-keyring",
        "mmdebstrap checks the Debian archive with it",
    ),
    HostTool("gpg", "gpg", "signs the sandbox's apt archive stand-in"),
    HostTool("openssl", "openssl", "the github.com stand-in's TLS certificate"),
    HostTool("git", "git", "the github.com stand-in serves git over smart HTTP"),
    HostTool("zstd", "zstd", "the apt stand-in's .debs are zstd-compressed, as Ubuntu's"),
    HostTool("ip", "iproute2", "the sandbox's network namespaces and links"),
    HostTool("ssh", "openssh-client", "reaches the sandbox's scheduler as the admin user"),
    HostTool("ssh-keygen", "openssh-client", "the sandbox's admin key"),
    HostTool("sfdisk", "fdisk", "partitions the sandbox nodes' data disks"),
    HostTool("tc", "iproute2", "the sandbox's link faults (slow links)"),
    HostTool("losetup", "mount", "the sandbox nodes' disks are loop devices", essential=True),
    HostTool("dpkg-deb", "dpkg", "builds the apt stand-in's packages", essential=True),
)

CLOUD_TOOLS: tuple[tuple[str, str], ...] = (
    ("pulumi", "`clusterctl up`/`down` run Pulumi: https://www.pulumi.com/docs/install/"),
    ("az", "Azure stacks: credentials (`az login`)"),
    ("aws", "EKS stacks: `pulumi up` runs `aws eks get-token`"),
    ("kubectl", "`clusterctl validate` on Kubernetes stacks"),
)


def register(app: typer.Typer) -> None:
    app.command()(doctor)


def _found(name: str) -> str | None:
    if name.startswith("/"):
        return name if Path(name).is_file() else None
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return shutil.which(name, path=path)


def doctor(as_json: JsonOpt = False) -> None:
    """Check this machine for the programs the sandbox and the cloud path run.

    Exits 1 when a sandbox tool is missing (each named with its Debian package); the cloud tools
    are reported, not required: `plan` needs none of them.
    """
    host = [(t, _found(t.name)) for t in HOST_TOOLS]
    cloud = [(name, why, _found(name)) for name, why in CLOUD_TOOLS]
    missing = [t for t, at in host if at is None]
    if as_json:
        doc = {
            "host": [{**asdict(t), "found": at} for t, at in host],
            "cloud": [{"name": n, "why": w, "found": at} for n, w, at in cloud],
            "ok": not missing,
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        for tool, at in host:
            if at:
                out.print(f"ok       {tool.name} ({at})", highlight=False, soft_wrap=True)
            else:
                out.print(
                    f"missing  {tool.name}: {tool.why}; install it: "
                    f"sudo apt-get install {tool.package}",
                    highlight=False,
                )
        for name, why, at in cloud:
            state = f"ok       {name} ({at})" if at else f"absent   {name}: needed for {why}"
            out.print(state, highlight=False, soft_wrap=True)
        if missing:
            packages = " ".join(dict.fromkeys(t.package for t in missing))
            out.print(
                f"the sandbox needs: sudo apt-get install {packages}",
                highlight=False,
                soft_wrap=True,
            )
    if missing:
        raise typer.Exit(1)
