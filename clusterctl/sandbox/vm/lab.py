"""The lab network: a namespace with a bridge (and the lab server), one namespace per node.

Addresses exist only inside namespaces created here; the host's own namespace gets nothing, and
nothing routes out of the lab (a new namespace does not forward, and it has no uplink).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from . import labserver
from .vmstate import VmState

BRIDGE = "labbr0"
GATEWAY_HOST = 1
"""The lab server's address on the bridge is .1, Azure's gateway address."""


class LabError(RuntimeError):
    pass


@dataclass(frozen=True)
class Lab:
    sid: str
    prefix: str = "10.40.128"
    """A /24 inside the lab only (Azure's compute subnet in this stack is 10.40.128.0/17)."""

    @property
    def netns(self) -> str:
        return f"gpucl-{self.sid}-lab"

    @property
    def gateway(self) -> str:
        return f"{self.prefix}.{GATEWAY_HOST}"

    def node_netns(self, node: str) -> str:
        return f"gpucl-{self.sid}-{node}"[:60]

    def address(self, index: int) -> str:
        """Azure gives the first VM of a subnet .4: scheduler index 0 -> .4, nodes .5 and up."""
        return f"{self.prefix}.{4 + index}"


def ip(*args: str, netns: str | None = None) -> str:
    argv = ["ip", *(["-n", netns] if netns else []), *args]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise LabError(f"{' '.join(argv)}: {proc.stderr.strip()}")
    return proc.stdout


def create_lab(state: VmState, lab: Lab) -> None:
    """The lab namespace with its bridge, the gateway address and the IMDS address."""
    state.record("netns", lab.netns)
    ip("netns", "add", lab.netns)
    ip("link", "set", "lo", "up", netns=lab.netns)
    ip("link", "add", BRIDGE, "type", "bridge", netns=lab.netns)
    ip("addr", "add", f"{lab.gateway}/24", "dev", BRIDGE, netns=lab.netns)
    ip("addr", "add", f"{labserver.IMDS_ADDR}/32", "dev", BRIDGE, netns=lab.netns)
    ip("link", "set", BRIDGE, "up", netns=lab.netns)


def attach_node(state: VmState, lab: Lab, node: str, index: int) -> str:
    """The node's namespace, a veth (eth0 inside, on the bridge outside), its address and routes."""
    ns = lab.node_netns(node)
    addr = lab.address(index)
    state.record("netns", ns)
    ip("netns", "add", ns)
    outer = f"v{index}-{node}"[:15]
    ip("link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", ns, netns=lab.netns)
    ip("link", "set", outer, "master", BRIDGE, "up", netns=lab.netns)
    ip("link", "set", "lo", "up", netns=ns)
    ip("addr", "add", f"{addr}/24", "dev", "eth0", netns=ns)
    ip("link", "set", "eth0", "up", netns=ns)
    ip("route", "add", "default", "via", lab.gateway, netns=ns)
    return addr


def link_of(lab: Lab, index: int, node: str) -> tuple[str, str]:
    """(namespace, interface) of a node's bridge-side veth, e.g. for a `tbf` fault."""
    return lab.netns, f"v{index}-{node}"[:15]


def slow_link(lab: Lab, index: int, node: str, rate: str = "20mbit") -> None:
    """Slow the node's traffic from the bridge (this kernel has no netem: a token bucket)."""
    ns, dev = link_of(lab, index, node)
    ip_ = [
        "tc",
        "-n",
        ns,
        "qdisc",
        "replace",
        "dev",
        dev,
        "root",
        "tbf",
        "rate",
        rate,
        "burst",
        "32kbit",
        "latency",
        "400ms",
    ]
    proc = subprocess.run(ip_, capture_output=True, text=True)
    if proc.returncode != 0:
        raise LabError(f"{' '.join(ip_)}: {proc.stderr.strip()}")


def clear_link(lab: Lab, index: int, node: str) -> None:
    ns, dev = link_of(lab, index, node)
    subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", dev, "root"], capture_output=True)


def start_server(
    state: VmState, lab: Lab, root: Path, github: Path, vm_map: Path, cgroups: list[Path]
) -> int:
    """Run labserver.py inside the lab namespace, in its own cgroups; returns its PID."""
    log = Path(state.workdir) / "logs" / "lab-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    res = state.record("process", "lab-server")
    join = "".join(f"echo $$ > {c}/cgroup.procs; " for c in cgroups)
    argv = [
        "sh",
        "-c",
        f'{join}exec nsenter --net=/run/netns/{lab.netns} -- "$@"',
        "sh",
        sys.executable,
        "-I",
        labserver.__file__,
        "--root",
        str(root),
        "--vm-map",
        str(vm_map),
        "--github",
        str(github),
        "--workdir",
        str(state.workdir),
    ]
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
        )
    state.set_pid(res, proc.pid)
    return proc.pid


def write_vm_map(path: Path, vms: dict[str, dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(vms, indent=1))
    os.replace(tmp, path)


def imds_compute(
    vm_name: str, scale_set: str, computer_name: str, vm_size: str, location: str = "eastus"
) -> dict:
    """The fields of Azure's /metadata/instance/compute the node scripts read (and a few more)."""
    return {
        "name": vm_name,
        "vmScaleSetName": scale_set,
        "osProfile": {"computerName": computer_name},
        "vmSize": vm_size,
        "location": location,
        "azEnvironment": "AzurePublicCloud",
        "vmId": "00000000-0000-4000-8000-" + hashlib.sha256(vm_name.encode()).hexdigest()[:12],
        "resourceGroupName": "gpucl-sandbox",
        "subscriptionId": "00000000-0000-0000-0000-000000000000",
        "osType": "Linux",
        "tags": "",
        "zone": "",
    }
