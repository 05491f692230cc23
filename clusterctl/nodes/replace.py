"""`clusterctl node replace -s STACK NAME`: a bad node gets a fresh OS disk (reimage) or new
hardware (redeploy) under the same name, and rejoins only after its health check passes.

Steps, all on the scheduler over SSH: refuse a node with running jobs unless forced (then they are
requeued), and a powered-down one (its VM is deallocated; power it up first); keep power saving off
it while it is rebuilt (`SuspendExcNodes+=`, taken back at the end, unless minNodes already keeps
it up: a drained idle node would otherwise be deallocated mid-rebuild); drain it with a
"<prefix> replace:" reason; `gpucl-power reimage|redeploy NODE` (the scheduler's managed identity
and its power role: no Azure credentials on this machine); wait,
bounded, until slurmd has registered again (a later SlurmdStartTime); then the node's own health
check (slurmd runs it at start and every HealthCheckInterval) decides: it resumes drains that carry
the cluster's prefix when every check passes, and drains with the failing check's reason
otherwise. A node still drained with our reason when the bound runs out is left drained (exit 1).
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from clusterctl.constants import DRAIN_PREFIX
from clusterctl.validate import CouldNotRun
from clusterctl.validate.recheck import admin

POWER = "/usr/local/bin/gpucl-power"
Action = Literal["reimage", "redeploy"]


@dataclass
class NodeView:
    state: str
    reason: str
    slurmd_start: str

    @property
    def drained(self) -> bool:
        return "DRAIN" in self.state.upper()

    @property
    def down(self) -> bool:
        return any(s in self.state.upper() for s in ("DOWN", "NOT_RESPONDING", "POWER"))

    @property
    def powered_down(self) -> bool:
        return any(s in self.state.upper() for s in ("POWERED_DOWN", "POWERING_DOWN"))


def parse_node(text: str) -> NodeView:
    """`scontrol show node NAME -o` (one line of Key=Value; Reason runs to its bracket)."""
    fields: dict[str, str] = {}
    reason = ""
    if " Reason=" in text:
        text, _, reason = text.partition(" Reason=")
        reason = reason.rsplit(" [", 1)[0].strip() if reason.rstrip().endswith("]") else reason
    for token in text.split():
        key, sep, value = token.partition("=")
        if sep:
            fields[key] = value
    if "NodeName" not in fields:
        raise CouldNotRun(f"unexpected scontrol output: {text.strip()[:120]!r}")
    return NodeView(
        fields.get("State", "UNKNOWN"), reason.strip(), fields.get("SlurmdStartTime", "")
    )


@dataclass
class Replace:
    ssh: Any
    """Runs a command line on the scheduler: .run(cmd, check=...) -> CompletedProcess."""
    node: str
    user: str | None
    prefix: str = DRAIN_PREFIX
    action: Action = "reimage"
    force: bool = False
    timeout_s: float = 2700.0
    poll_s: float = 20.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    log: list[str] = field(default_factory=list)

    def _sh(self, argv: list[str], *, root: bool = True) -> str:
        cmd = shlex.join(argv)
        return self.ssh.run(admin(cmd, self.user) if root else cmd).stdout

    def view(self) -> NodeView:
        return parse_node(self._sh(["scontrol", "show", "node", self.node, "-o"], root=False))

    def jobs(self) -> list[str]:
        out = self._sh(
            ["squeue", "-h", "-w", self.node, "-t", "RUNNING,CONFIGURING,COMPLETING", "-o", "%i"],
            root=False,
        )
        return [j.strip() for j in out.splitlines() if j.strip()]

    @property
    def reason(self) -> str:
        return f"{self.prefix} replace: {self.action} requested by clusterctl"

    def run(self) -> bool:
        """True: the node is back and passed its checks. CouldNotRun: refused or unreachable."""
        before = self.view()
        if before.powered_down:
            raise CouldNotRun(
                f"node {self.node} is powered down ({before.state}): its VM is deallocated. Power "
                f"it up first (scontrol update NodeName={self.node} State=POWER_UP), then replace"
            )
        jobs = self.jobs()
        if jobs and not self.force:
            raise CouldNotRun(
                f"node {self.node} runs job(s) {', '.join(jobs)}; pass --force to requeue them "
                "and replace it"
            )
        exempted = self._exempt_from_power_saving()
        try:
            return self._replace(before, jobs)
        finally:
            if exempted:
                self._sh(["scontrol", "update", f"SuspendExcNodes-={self.node}"])
                self.log.append(f"power saving applies to {self.node} again")

    def _exempt_from_power_saving(self) -> bool:
        """SuspendExcNodes+=NODE unless the configured list already holds it (minNodes): then
        the list is left as it is, so the end of the replace does not take the node out of it."""
        conf = self._sh(["scontrol", "show", "config"], root=False)
        m = re.search(r"^SuspendExcNodes\s*=\s*(\S+)", conf, re.MULTILINE)
        current = m.group(1) if m and m.group(1) not in ("(null)", "") else ""
        if current:
            names = self._sh(["scontrol", "show", "hostnames", current], root=False).split()
            if self.node in names:
                return False
        self._sh(["scontrol", "update", f"SuspendExcNodes+={self.node}"])
        self.log.append(f"power saving off for {self.node} while it is rebuilt")
        return True

    def _replace(self, before: NodeView, jobs: list[str]) -> bool:
        self._sh(
            ["scontrol", "update", f"NodeName={self.node}", "State=DRAIN", f"Reason={self.reason}"]
        )
        self.log.append(f"drained {self.node}")
        if jobs:
            self._sh(["scontrol", "requeue", ",".join(jobs)])
            self.log.append(f"requeued {', '.join(jobs)}")
        proc = self.ssh.run(
            admin(shlex.join(["-u", "slurm", POWER, self.action, self.node]), self.user)
            if self.user not in (None, "root")
            else shlex.join([POWER, self.action, self.node]),
            check=False,
        )
        if proc.returncode != 0:
            raise CouldNotRun(
                f"{self.action} of {self.node} refused: {(proc.stderr or proc.stdout).strip()}"
            )
        self.log.append(f"{self.action} accepted for {self.node}")
        return self._wait(before.slurmd_start)

    def _wait(self, old_start: str) -> bool:
        deadline = self.clock() + self.timeout_s
        back = False
        while self.clock() < deadline:
            self.sleep(self.poll_s)
            now = self.view()
            if not back:
                if now.slurmd_start and now.slurmd_start != old_start and not now.down:
                    back = True
                    self.log.append(f"{self.node} registered again (slurmd {now.slurmd_start})")
                continue
            if not now.drained:
                self.log.append(f"{self.node} passed its health check and is back in service")
                return True
            if not now.reason.startswith(f"{self.prefix} replace:"):
                self.log.append(f"{self.node} failed its health check: {now.reason}")
                return False
        minutes = self.timeout_s / 60
        what = "no health verdict" if back else "did not register again"
        self.log.append(f"{self.node}: {what} within {minutes:g} min; left drained")
        return False
