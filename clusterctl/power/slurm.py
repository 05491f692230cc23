"""The few Slurm commands the power program and the node watcher run (scontrol, squeue)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from datetime import datetime

Runner = Callable[[Sequence[str]], str]
"""Runs a command, returns its stdout, raises RuntimeError with stderr on a non-zero exit."""


def run(argv: Sequence[str]) -> str:
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def expand(hostlist: str, runner: Runner = run) -> list[str]:
    """Slurm hostlist -> names, by Slurm itself (`scontrol show hostnames`)."""
    return [n for n in runner(["scontrol", "show", "hostnames", hostlist]).split() if n]


def all_nodes(runner: Runner = run) -> list[str]:
    """Every node slurmctld knows, from its live configuration (a resize changes it)."""
    return sorted(
        {n.strip() for n in runner(["sinfo", "-h", "-N", "-o", "%N"]).splitlines() if n.strip()}
    )


def reason_times(names: Sequence[str], runner: Runner = run) -> dict[str, float | None]:
    """Name -> when its reason was set (sinfo's %H, the scheduler's local time, as epoch
    seconds); None when sinfo gives none ("Unknown")."""
    argv = ["sinfo", "-h", "-N", "-n", ",".join(names), "-o", "%N|%H"]
    out: dict[str, float | None] = {}
    for line in runner(argv).splitlines():
        name, _, stamp = line.strip().partition("|")
        if not name:
            continue
        try:
            out[name] = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S").timestamp()
        except ValueError:
            out[name] = None
    return out


def update(nodes: Sequence[str], state: str, reason: str | None, runner: Runner = run) -> None:
    argv = ["scontrol", "update", f"NodeName={','.join(nodes)}", f"State={state}"]
    if reason is not None:
        argv.append(f"Reason={reason}")
    runner(argv)


def jobs_on(node: str, runner: Runner = run) -> list[str]:
    """Ids of the running or starting jobs on a node."""
    out = runner(["squeue", "-h", "-w", node, "-t", "RUNNING,CONFIGURING,COMPLETING", "-o", "%i"])
    return [line.strip() for line in out.splitlines() if line.strip()]


def busy(names: Sequence[str], runner: Runner = run) -> set[str]:
    """Those of `names` that run or start a job: one squeue for the list (`-w` takes a
    hostlist; a job's %N may name nodes outside it) and one local hostlist expansion."""
    if not names:
        return set()
    argv = ["squeue", "-h", "-w", ",".join(names), "-t", "RUNNING,CONFIGURING,COMPLETING"]
    lists = [line.strip() for line in runner([*argv, "-o", "%N"]).splitlines() if line.strip()]
    return set(expand(",".join(lists), runner)) & set(names) if lists else set()


def requeue(jobs: Sequence[str], runner: Runner = run) -> None:
    if jobs:
        runner(["scontrol", "requeue", ",".join(jobs)])


def reason(node: str, runner: Runner = run) -> str:
    """The node's drain/down reason, '' when it has none."""
    out = runner(["sinfo", "-h", "-N", "-n", node, "-o", "%E"]).strip()
    return "" if out in ("", "none") else out.splitlines()[0]


def states(names: Sequence[str], runner: Runner = run) -> dict[str, tuple[str, str]]:
    """Name -> (sinfo's state with its power suffix, e.g. "down~" or "drained~"; the reason or
    ''). A drained node reads "drained"/"draining" whatever its base state: sinfo puts the drain
    first, so "down~" is DOWN, powered down and not drained."""
    argv = ["sinfo", "-h", "-N", "-o", "%N|%T|%E"]
    if names:
        argv[3:3] = ["-n", ",".join(names)]
    out: dict[str, tuple[str, str]] = {}
    for line in runner(argv).splitlines():
        name, _, rest = line.strip().partition("|")
        state, _, why = rest.partition("|")
        if name:
            out[name] = (state, "" if why in ("", "none") else why)
    return out
