"""Fault injection: a slow link, a failing health check, a dead slurmd."""

from __future__ import annotations

import os
import signal
import subprocess

from . import daemons, netns
from .layout import Layout
from .runtime import _require, exec_on_node
from .state import SandboxError, SandboxState


def _tc(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SandboxError(f"{' '.join(argv)} failed: {proc.stderr.strip()}")
    return proc


# Used when the kernel has no sch_netem (CONFIG_NET_SCH_NETEM unset, as on some VM kernels).
FALLBACK_RATE = "1mbit"


def slow_link(
    workdir: str | os.PathLike[str], node: str, *, delay_ms: int = 100, rate: str | None = None
) -> str:
    """Slow traffic to and from `node` only: a qdisc on both ends of its veth.

    Returns the qdisc used: "netem" (delay, and rate if given) or, on a kernel without netem,
    "tbf" (a rate limit of `rate` or FALLBACK_RATE; no added delay).
    """
    state, _ = _require(workdir)
    _node(state.nodes, node)
    ends = _link_ends(state, node)
    netem = ["netem", "delay", f"{delay_ms}ms"] + (["rate", rate] if rate else [])
    probe = _tc(["tc", "qdisc", "replace", "dev", ends[0][1], "root", *netem], check=False)
    if probe.returncode == 0:
        kind, qdisc = "netem", netem
    elif "unknown" in probe.stderr:
        kind = "tbf"
        qdisc = ["tbf", "rate", rate or FALLBACK_RATE, "burst", "16kbit", "latency", "5s"]
    else:
        raise SandboxError(f"tc netem on {ends[0][1]} failed: {probe.stderr.strip()}")
    for prefix, dev in ends:
        _tc([*prefix, "tc", "qdisc", "replace", "dev", dev, "root", *qdisc])
    return kind


def clear_link(workdir: str | os.PathLike[str], node: str) -> None:
    state, _ = _require(workdir)
    _node(state.nodes, node)
    for prefix, dev in _link_ends(state, node):
        _tc([*prefix, "tc", "qdisc", "del", "dev", dev, "root"], check=False)


def _link_ends(state: SandboxState, node: str) -> list[tuple[list[str], str]]:
    """(argv prefix, device) for the host side of the node's veth and its eth0 inside the pod."""
    ns = netns.netns_name(state.sandbox_id, node)
    return [([], netns.pod_veth(state, node)), (["ip", "netns", "exec", ns], "eth0")]


def kill_slurmd(workdir: str | os.PathLike[str], node: str) -> None:
    """SIGKILL the node's slurmd: the controller soon shows the node not responding."""
    state, _ = _require(workdir)
    _node(state.nodes, node)
    res = state.process(f"slurmd@{node}")
    if res is None or not daemons.is_alive(res) or res.pid is None:
        raise SandboxError(f"slurmd on {node} is not running")
    os.kill(res.pid, signal.SIGKILL)
    daemons.reap(res.pid)


def fail_health_check(
    workdir: str | os.PathLike[str], node: str, reason: str = "injected fault", *, now: bool = False
) -> None:
    """Make the health check fail on `node` only; with now=True run it at once (as slurmd would)."""
    state, lay = _require(workdir)
    _node(state.nodes, node)
    (lay.health / node).write_text(reason + "\n")
    if now:
        run_health_check(workdir, node)


def clear_health_check(workdir: str | os.PathLike[str], node: str) -> None:
    state, lay = _require(workdir)
    _node(state.nodes, node)
    (lay.health / node).unlink(missing_ok=True)


def run_health_check(workdir: str | os.PathLike[str], node: str) -> int:
    """Run the HealthCheckProgram in the node's pod, as slurmd does; returns its exit code."""
    program = str(Layout.of(workdir).health_check)
    return exec_on_node(workdir, node, ["env", f"SLURMD_NODENAME={node}", program]).returncode


def _node(nodes: list[str], node: str) -> None:
    if node not in nodes:
        raise SandboxError(f"no node {node} in the sandbox (nodes: {', '.join(nodes)})")
