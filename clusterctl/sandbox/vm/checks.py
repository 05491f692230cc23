"""What must hold once the sandbox's nodes have booted, checked the way an operator would.

Each check runs commands on the nodes through `run(node, argv)` and returns Problems naming the
node, the stage and the lines that show it, so `sandbox up` can fail with them. Pure over that
callable: the tests drive them with recorded outputs, the sandbox with nsenter.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Run = Callable[[str, list[str]], subprocess.CompletedProcess[str]]

SLURM_LOGS = "/var/log/slurm"
# Log lines that say "error" but are not one, each with its reason. Keep this list short.
ALLOWED_LOG_LINES: tuple[tuple[str, str], ...] = (
    (
        r"error: (Could not open (node|job|reservation|trigger) state file|NOTE: Trying backup "
        r"state save file)",
        "the first start of a new cluster has no saved state yet",
    ),
    (
        r"error: No fed_mgr state file \(\S+\) to recover",
        "the first start of a cluster with accounting has no federation state yet (24.11 logs "
        "it as an error, 26.05 does not)",
    ),
    (
        r"error: We can't find assoc 1 on cluster \S+$",
        "slurmdbd 24.11 (not 26.05), while the accounting bootstrap adds the first account just "
        "after the cluster, before slurmctld starts: its check of the parent association for "
        "coordinator flags misses the new cluster's root association (id 1) in its cache; the "
        "account and user associations are made all the same (test_vm_user_path's 24.11 run "
        "submits as a team user of that account)",
    ),
    (
        r"error: High latency for 1000 calls to gettimeofday\(\)",
        "slurmctld times 1000 gettimeofday() calls at start (bound 200 us); on a host booting "
        "every node at once it can be preempted mid-loop (22 us when idle, seen 2262 us in CI)",
    ),
    (
        r"slurmd: error: Node configuration differs from hardware",
        "the sandbox's nodes are smaller than the ND VMs they pose as (config_overrides)",
    ),
)


@dataclass(frozen=True)
class Problem:
    node: str
    stage: str
    lines: tuple[str, ...]

    def line(self) -> str:
        shown = "; ".join(x.strip() for x in self.lines[-5:] if x.strip())
        return f"{self.node}: {self.stage}: {shown}"


def boot_problems(reports: dict[str, dict]) -> list[Problem]:
    """cloud-init finished cleanly, no failed units, the system running, on every node."""
    out = []
    for node, rep in sorted(reports.items()):
        if rep.get("cloud_init") != "done" or rep.get("errors"):
            lines = [f"cloud-init {rep.get('cloud_init')}", *map(str, rep.get("errors") or [])]
            out.append(Problem(node, "cloud-init", tuple(lines)))
        if rep.get("failed_units"):
            out.append(Problem(node, "systemd", tuple(f"failed: {u}" for u in rep["failed_units"])))
        if rep.get("system") not in ("running",):
            out.append(Problem(node, "systemd", (f"is-system-running: {rep.get('system')}",)))
    return out


def log_errors(text: str, allowed: Sequence[tuple[str, str]] = ALLOWED_LOG_LINES) -> list[str]:
    """Lines of a Slurm log that report an error or a fatal condition and are not allowed."""
    bad = []
    for line in text.splitlines():
        if not re.search(r"\b(error|fatal)\b", line, re.I):
            continue
        if any(re.search(pattern, line) for pattern, _ in allowed):
            continue
        bad.append(line)
    return bad


def slurm_log_problems(run: Run, nodes: Sequence[str]) -> list[Problem]:
    out = []
    for node in nodes:
        listing = run(node, ["sh", "-c", f"ls {SLURM_LOGS}/*.log 2>/dev/null"]).stdout.split()
        for path in listing:
            bad = log_errors(run(node, ["cat", path]).stdout)
            if bad:
                out.append(Problem(node, f"log {path}", tuple(bad)))
    return out


def parse_sinfo(text: str) -> dict[str, tuple[str, str]]:
    """`sinfo -N -h -o '%N %T %G'` -> {node: (state, gres)}."""
    nodes = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            nodes[parts[0]] = (parts[1], parts[2])
    return nodes


def wait_idle(run: Run, scheduler: str, count: int, timeout: float = 90.0) -> dict:
    """sinfo's nodes once `count` of them are idle, or what it shows when `timeout` runs out."""
    deadline = time.monotonic() + timeout
    while True:
        got = parse_sinfo(run(scheduler, ["sinfo", "-N", "-h", "-o", "%N %T %G"]).stdout)
        idle = [n for n, (state, _) in got.items() if state == "idle"]
        if len(idle) >= count or time.monotonic() > deadline:
            return got
        time.sleep(2)


def slurm_problems(
    run: Run, scheduler: str, names: Sequence[str], gres: str, timeout: float = 90.0
) -> list[Problem]:
    """Every node idle with its GRES (waiting a bounded time for them to register), then one
    job across all of them."""
    got = wait_idle(run, scheduler, len(names), timeout)
    out = []
    for name in names:
        state, node_gres = got.get(name, ("missing", ""))
        if state != "idle" or gres not in node_gres:
            out.append(Problem(name, "slurm", (f"state {state}, gres {node_gres or '-'}",)))
    if out:
        return out
    n = len(names)
    srun = run(scheduler, ["srun", f"-N{n}", "--time=1", "hostname"])
    answered = set(srun.stdout.split())
    if srun.returncode != 0 or len(answered) != n:
        out.append(Problem(scheduler, f"srun -N{n} hostname", (srun.stdout, srun.stderr)))
    return out


def sbatch_problems(run: Run, scheduler: str, user: str) -> list[Problem]:
    """A batch job submitted by the admin user on the scheduler runs to completion."""
    cmd = "sbatch --wait --time=1 -o /tmp/gpucl-check.out --wrap hostname"
    proc = run(scheduler, ["su", "-", user, "-c", cmd])
    if proc.returncode != 0:
        return [Problem(scheduler, f"sbatch as {user}", (proc.stdout, proc.stderr))]
    return []


DAEMONS = {"scheduler": ("munge", "slurmctld"), "gpu": ("munge", "slurmd"), "login": ("munge",)}


def daemon_problems(run: Run, roles: dict[str, str]) -> list[Problem]:
    """Each role's daemons are active; otherwise systemd's own account of why (a unit skipped by
    a Condition is neither failed nor running, so the failed-units check does not see it)."""
    out = []
    for node, role in sorted(roles.items()):
        for unit in DAEMONS.get(role, ()):
            state = run(node, ["systemctl", "is-active", unit]).stdout.strip()
            if state != "active":
                status = run(node, ["systemctl", "status", "--no-pager", "-n", "3", unit]).stdout
                lines = [ln for ln in status.splitlines() if ln.strip()][-4:]
                out.append(Problem(node, f"{unit}.service {state or 'unknown'}", tuple(lines)))
    return out


def munge_problems(run: Run, nodes: Sequence[str]) -> list[Problem]:
    """A credential made on each node decodes on the next one (one shared key)."""
    out = []
    for i, node in enumerate(nodes):
        other = nodes[(i + 1) % len(nodes)]
        cred = run(node, ["munge", "-n"])
        if cred.returncode != 0:
            out.append(Problem(node, "munge -n", (cred.stderr,)))
            continue
        script = f"printf %s {shlex.quote(cred.stdout.strip())} | unmunge"
        dec = run(other, ["sh", "-c", script])
        if dec.returncode != 0:
            out.append(Problem(other, f"unmunge a credential from {node}", (dec.stderr,)))
    return out
