"""Network plumbing: one private bridge, one network namespace and veth pair per pod.

Pods get no default route, so nothing in the sandbox can reach any address outside its bridge.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import subprocess

from .state import SandboxError, SandboxState


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SandboxError(f"ip {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


def sandbox_id(workdir: str) -> str:
    return hashlib.sha1(workdir.encode()).hexdigest()[:6]


def _used_prefixes() -> set[str]:
    """The /24s of every IPv4 address already on this host (other sandboxes included)."""
    out = ip("-j", "-4", "addr", "show", check=False).stdout or "[]"
    used = set()
    for link in json.loads(out):
        for a in link.get("addr_info", []):
            used.add(str(ipaddress.ip_network(f"{a['local']}/24", strict=False).network_address))
    return used


def pick_subnet(sid: str) -> str:
    """A free 10.x.y.0/24 derived from the sandbox id, e.g. "10.201.7"."""
    used = _used_prefixes()
    n = int(sid, 16)
    for i in range(4096):
        k = (n + i) % (50 * 256)
        prefix = f"10.{200 + k // 256}.{k % 256}"
        if f"{prefix}.0" not in used:
            return prefix
    raise SandboxError("no free 10.200-249.x.0/24 subnet for the sandbox bridge")


def bridge_name(sid: str) -> str:
    return f"ccbr{sid}"


def netns_name(sid: str, pod: str) -> str:
    return f"cc-{sid}-{pod}"


def veth_name(sid: str, index: int) -> str:
    return f"cc{sid}v{index}"  # IFNAMSIZ: at most 15 characters


def pod_addr(state: SandboxState, pod: str) -> str:
    if pod == state.controller:
        return f"{state.subnet}.2"
    return f"{state.subnet}.{10 + state.nodes.index(pod)}"


def host_addr(state: SandboxState) -> str:
    return f"{state.subnet}.1"


def pod_veth(state: SandboxState, pod: str) -> str:
    index = 0 if pod == state.controller else 1 + state.nodes.index(pod)
    return veth_name(state.sandbox_id, index)


def create_bridge(state: SandboxState) -> None:
    br = bridge_name(state.sandbox_id)
    state.record("bridge", br)
    ip("link", "add", br, "type", "bridge")
    ip("addr", "add", f"{host_addr(state)}/24", "dev", br)
    ip("link", "set", br, "up")


def create_pod_net(state: SandboxState, pod: str) -> str:
    """Namespace + veth for one pod; returns the namespace name."""
    ns = netns_name(state.sandbox_id, pod)
    state.record("netns", ns, pod=pod)
    ip("netns", "add", ns)
    veth = pod_veth(state, pod)
    state.record("veth", veth, pod=pod)
    ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
    ip("link", "set", veth, "master", bridge_name(state.sandbox_id), "up")
    ip("-n", ns, "addr", "add", f"{pod_addr(state, pod)}/24", "dev", "eth0")
    ip("-n", ns, "link", "set", "eth0", "up")
    ip("-n", ns, "link", "set", "lo", "up")
    return ns


def netns_pids(ns: str) -> list[int]:
    proc = ip("netns", "pids", ns, check=False)
    return [int(p) for p in proc.stdout.split()] if proc.returncode == 0 else []


def netns_exists(ns: str) -> bool:
    return ns in ip("netns", "list", check=False).stdout.split()


def delete_netns(ns: str) -> None:
    if netns_exists(ns):
        ip("netns", "del", ns)


def link_exists(name: str) -> bool:
    return ip("link", "show", "dev", name, check=False).returncode == 0


def delete_link(name: str) -> None:
    if link_exists(name):
        ip("link", "del", name)
