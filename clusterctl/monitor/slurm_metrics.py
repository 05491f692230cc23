"""Slurm -> Prometheus, run every 30 s on the scheduler by gpucl-slurm-metrics.timer.

Writes node_exporter's textfile (the scheduler's node_exporter serves it, so Prometheus scrapes
Slurm's view with everything else) and the file_sd target lists: only nodes that are powered up
are scraped, so a node power saving stopped is not an exporter down. Parsing and rendering are
pure; `main` runs sinfo and squeue and writes the files atomically.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

Runner = Callable[[Sequence[str]], str]

SINFO = ["sinfo", "-h", "-N", "-o", "%N|%P|%T|%o|%E"]
PENDING = ["squeue", "-h", "-t", "PENDING", "-o", "%P|%V"]
RUNNING = ["squeue", "-h", "-t", "RUNNING", "-o", "%P"]
STATES = (
    "idle", "allocated", "mixed", "completing", "drained", "draining", "down",
    "not_responding", "powering_up", "powered_down", "powering_down", "other",
)  # fmt: skip
"""Every value of gpucl_slurm_nodes' state label; each is written, zeros too, so a panel that
stacks them never loses a series."""


@dataclass(frozen=True)
class Node:
    name: str
    partition: str
    state: str
    """sinfo's %T, e.g. "idle~", "drained", "allocated#" (the suffix is the power state)."""
    address: str
    reason: str

    @property
    def base(self) -> str:
        return self.state.rstrip("*~#%!$@^-")

    @property
    def suffix(self) -> str:
        return self.state[len(self.base) :]

    @property
    def drained(self) -> bool:
        return self.base in ("drained", "draining", "drain")

    @property
    def billing(self) -> bool:
        """The VM exists and is allocated: everything but powered down (`~`)."""
        return "~" not in self.suffix

    @property
    def scraped(self) -> bool:
        """Its exporters answer: up, not powering up (`#`) or down (`%`, `!`)."""
        return not any(c in self.suffix for c in "~#%!")

    @property
    def shown(self) -> str:
        """The one state a panel shows: a drain first (someone has to act), then trouble, then
        power, then work."""
        if self.base in ("drained", "drain"):
            return "drained"
        if self.base == "draining":
            return "draining"
        if self.base in ("down", "fail", "failing"):
            return "down"
        if "*" in self.suffix:
            return "not_responding"
        if "#" in self.suffix:
            return "powering_up"
        if "~" in self.suffix:
            return "powered_down"
        if "%" in self.suffix or "!" in self.suffix:
            return "powering_down"
        if self.base in ("idle", "allocated", "mixed", "completing"):
            return self.base
        return "other"


def parse_nodes(text: str) -> list[Node]:
    """`sinfo -h -N -o "%N|%P|%T|%o|%E"`: one line per node and partition; the default
    partition's name carries sinfo's `*`."""
    nodes = []
    for line in text.splitlines():
        parts = line.strip().split("|", 4)
        if len(parts) < 5 or not parts[0]:
            continue
        name, part, state, addr, reason = parts
        reason = "" if reason in ("none", "(null)") else reason
        nodes.append(Node(name, part.rstrip("*"), state, addr, reason))
    return nodes


def parse_pending(text: str) -> list[tuple[str, float]]:
    """`squeue -h -t PENDING -o "%P|%V"` -> [(first partition, submit time as epoch seconds)]
    (%V is the scheduler's local time)."""
    out = []
    for line in text.splitlines():
        part, _, submitted = line.strip().partition("|")
        if not part:
            continue
        try:
            when = datetime.strptime(submitted, "%Y-%m-%dT%H:%M:%S").timestamp()
        except ValueError:
            continue
        out.append((part.split(",")[0], when))
    return out


def drain_owner(reason: str, prefix: str) -> str:
    """Who set a drain, from its reason's prefix: `gpucl:` the health check (or the power
    program), `gpucl-deep:` the deep tier, `gpucl-nccl:` validate; anything else an admin."""
    if reason.startswith(prefix):
        return "health"
    m = re.match(re.escape(prefix[:-1]) + r"-([a-z]+):", reason)
    return m.group(1) if m else "admin"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def render(
    nodes: Sequence[Node],
    pending: Sequence[tuple[str, float]],
    running: Sequence[str],
    prices: dict[str, float],
    drain_prefix: str,
    now: float,
) -> str:
    """The textfile: node counts by shown state, one series per drained node with its reason and
    who set it, jobs by state, the oldest pending job's wait, and the spend of the VMs that
    exist now at the partition's on-demand price."""
    parts = sorted({n.partition for n in nodes} | set(prices))
    lines = [
        "# HELP gpucl_slurm_nodes Slurm nodes by partition and state (one state per node).",
        "# TYPE gpucl_slurm_nodes gauge",
    ]
    for part in parts:
        for state in STATES:
            count = sum(1 for n in nodes if n.partition == part and n.shown == state)
            lines.append(f'gpucl_slurm_nodes{{partition="{part}",state="{state}"}} {count}')
    lines += [
        "# HELP gpucl_slurm_node_drained 1 per drained or draining node, with its reason and who "
        "set it (health, deep, nccl: the cluster's own checks; admin: anyone else).",
        "# TYPE gpucl_slurm_node_drained gauge",
    ]
    seen = set()
    for n in nodes:
        if n.drained and n.name not in seen:
            seen.add(n.name)
            owner = drain_owner(n.reason, drain_prefix)
            lines.append(
                f'gpucl_slurm_node_drained{{node="{n.name}",partition="{n.partition}",'
                f'reason="{_label(n.reason)}",owner="{owner}"}} 1'
            )
    lines += [
        "# HELP gpucl_slurm_jobs Slurm jobs by partition and state.",
        "# TYPE gpucl_slurm_jobs gauge",
    ]
    for part in parts:
        waiting = sum(1 for p, _ in pending if p == part)
        busy = sum(1 for p in running if p.split(",")[0] == part)
        lines.append(f'gpucl_slurm_jobs{{partition="{part}",state="pending"}} {waiting}')
        lines.append(f'gpucl_slurm_jobs{{partition="{part}",state="running"}} {busy}')
    lines += [
        "# HELP gpucl_slurm_oldest_pending_seconds How long the oldest pending job has waited.",
        "# TYPE gpucl_slurm_oldest_pending_seconds gauge",
    ]
    for part in parts:
        waits = [now - when for p, when in pending if p == part]
        lines.append(
            f'gpucl_slurm_oldest_pending_seconds{{partition="{part}"}} {max(waits, default=0):.0f}'
        )
    lines += [
        "# HELP gpucl_cost_usd_per_hour On-demand price of the GPU VMs that exist now "
        "(all but powered down), by partition.",
        "# TYPE gpucl_cost_usd_per_hour gauge",
    ]
    for part in parts:
        if part not in prices:  # no catalog price: no series (unknown), never a 0
            continue
        vms = {n.name for n in nodes if n.partition == part and n.billing}
        lines.append(f'gpucl_cost_usd_per_hour{{partition="{part}"}} {len(vms) * prices[part]:.2f}')
    lines += [
        "# HELP gpucl_slurm_metrics_last_success_timestamp_seconds When Slurm last answered.",
        "# TYPE gpucl_slurm_metrics_last_success_timestamp_seconds gauge",
        f"gpucl_slurm_metrics_last_success_timestamp_seconds {now:.0f}",
    ]
    return "\n".join(lines) + "\n"


def targets(nodes: Sequence[Node], port: int) -> list[dict]:
    """file_sd targets: every powered-up node at `port`, labelled with its Slurm name and
    partition (dashboards and alerts join on `node`)."""
    out, seen = [], set()
    for n in sorted(nodes, key=lambda n: n.name):
        if n.scraped and n.address and n.name not in seen:
            seen.add(n.name)
            out.append(
                {
                    "targets": [f"{n.address}:{port}"],
                    "labels": {"node": n.name, "partition": n.partition, "role": "gpu"},
                }
            )
    return out


def _run(argv: Sequence[str]) -> str:
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def _write(path: Path, text: str) -> None:
    """Atomically (node_exporter and Prometheus never read half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.chmod(tmp, 0o644)
    tmp.replace(path)


def collect(config: dict, runner: Runner = _run, now: float | None = None) -> dict[Path, str]:
    """The files to write: {path: text}. Raises RuntimeError when Slurm does not answer (the
    last good files stay; the staleness alert fires)."""
    nodes = parse_nodes(runner(SINFO))
    pending = parse_pending(runner(PENDING))
    running = [line.strip() for line in runner(RUNNING).splitlines() if line.strip()]
    text = render(
        nodes,
        pending,
        running,
        {k: float(v) for k, v in config["pricesUsdPerHour"].items()},
        config["drainPrefix"],
        time.time() if now is None else now,
    )
    tdir = Path(config["targetsDir"])
    return {
        Path(config["textfile"]): text,
        tdir / "node.json": json.dumps(targets(nodes, config["ports"]["node"]), indent=1) + "\n",
        tdir / "dcgm.json": json.dumps(targets(nodes, config["ports"]["dcgm"]), indent=1) + "\n",
    }


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print("usage: python3 -m gpucl_monitor CONFIG.json", file=sys.stderr)
        return 2
    config = json.loads(Path(argv[0]).read_text())
    try:
        files = collect(config)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"gpucl-slurm-metrics: Slurm did not answer: {exc}", file=sys.stderr)
        return 1
    for path, text in files.items():
        _write(path, text)
    return 0
