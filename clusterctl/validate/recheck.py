"""`validate --nccl --resume NODE`: return a node that validate drained, once a pair test passes.

A drained node takes no jobs, so the recheck holds the node and a healthy partner in a maintenance
reservation (no other job can land there), resumes the node inside it, runs a 2-node all-reduce
in the reservation, and then leaves the node in service or drains it again with the validation
prefix. The reservation is deleted whatever happens. Only nodes drained by validate (their reason
starts with the validation prefix) are touched: an admin's or the health check's drain is theirs.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from clusterctl.errors import UserError
from clusterctl.validate import CouldNotRun
from clusterctl.validate.drain import validation_prefix
from clusterctl.validate.sweep import output_figure


@dataclass(frozen=True)
class Recheck:
    node: str
    partner: str
    busbw_gbps: float
    floor_gbps: float

    @property
    def passed(self) -> bool:
        return self.busbw_gbps > 0 and self.busbw_gbps >= self.floor_gbps

    def line(self) -> str:
        figure = f"{self.busbw_gbps:.3g} GB/s with {self.partner} (floor {self.floor_gbps:.3g})"
        if self.passed:
            return f"{self.node}: back in service: {figure}"
        return f"{self.node}: still failing, drained again: {figure}"


def parse_nodes(text: str) -> dict[str, tuple[str, str]]:
    """`sinfo -h -N -o '%N|%T|%E'` -> {node: (state, reason)} (a node in two partitions: once)."""
    out: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        parts = line.split("|", 2)
        if len(parts) == 3 and parts[0]:
            out.setdefault(parts[0], (parts[1], parts[2]))
    return out


def admin(cmd: str, user: str | None) -> str:
    """Slurm admin commands: as root directly, else through sudo (never prompting)."""
    return cmd if user in (None, "root") else f"sudo -n {cmd}"


def check_owned(nodes: Sequence[str], states: dict[str, tuple[str, str]], prefix: str) -> None:
    problems = []
    for node in nodes:
        state, reason = states.get(node, ("missing", ""))
        if "drain" not in state.lower() or not reason.startswith(prefix):
            problems.append(
                f"--resume {node}: not drained by validate (state {state}, reason "
                f"{reason or 'none'!r}); only drains starting with {prefix!r} are resumed here"
            )
    if problems:  # the user named a node this is not for: a usage error (exit 2), one line each
        raise UserError(problems)


def recheck_nodes(
    ssh: Any,
    launcher: Any,
    job: Any,
    nodes: Sequence[str],
    *,
    health_prefix: str,
    floor_gbps: float | None,
    gate_bytes: int,
    reference_ratio: float = 0.25,
    say=lambda _: None,
) -> list[Recheck]:
    """Recheck each node with an idle partner; `floor_gbps` None: measure two idle nodes first and
    take `reference_ratio` of that (the sandbox's probe has no catalog baseline)."""
    from clusterctl.validate.slurm_launcher import pair_job

    user = getattr(getattr(ssh, "target", None), "user", None)
    prefix = validation_prefix(health_prefix)
    states = parse_nodes(ssh.run("sinfo -h -N -o '%N|%T|%E'").stdout)
    check_owned(nodes, states, prefix)
    idle = [n for n, (st, _) in sorted(states.items()) if st == "idle" and n not in nodes]
    if not idle or (floor_gbps is None and len(idle) < 2):
        raise CouldNotRun(f"no idle partner node to test {', '.join(nodes)} with (idle: {idle})")
    if floor_gbps is None:
        ref = launcher.run(pair_job(job, idle[0], idle[1]))
        best = output_figure(ref.output, gate_bytes)
        floor_gbps = reference_ratio * best
        say(f"reference pair {idle[0]} + {idle[1]}: {best:.3g} GB/s; floor {floor_gbps:.3g}")
    results = []
    for node in nodes:
        # A drained node is powered down like any idle one (its drain kept): State=IDLE lifts the
        # drain there; RESUME would ask a deallocated VM to register (NOT_RESPONDING, stranded by
        # the next reconfigure on Slurm 24.11). The pair job in the reservation powers it up.
        lift = "idle" if states[node][0].endswith("~") else "resume"
        results.append(
            _one(ssh, launcher, job, node, idle[0], user, prefix, floor_gbps, gate_bytes, lift)
        )
        say(results[-1].line())
    return results


def _one(ssh, launcher, job, node, partner, user, prefix, floor, gate, lift) -> Recheck:
    from clusterctl.validate.slurm_launcher import pair_job

    name = f"gpucl-recheck-{node}"[:60]
    ssh.run(
        admin(
            f"scontrol create reservation reservationname={shlex.quote(name)} starttime=now "
            f"duration={job.time_limit_min + 5} nodes={shlex.quote(f'{node},{partner}')} "
            f"users={shlex.quote(user or 'root')} flags=maint,ignore_jobs",
            user,
        )
    )
    figure = 0.0
    try:
        ssh.run(admin(f"scontrol update nodename={shlex.quote(node)} state={lift}", user))
        result = launcher.run(replace(pair_job(job, node, partner), reservation=name))
        figure = output_figure(result.output, gate) if result.output.strip() else 0.0
    finally:
        outcome = Recheck(node, partner, figure, floor)
        if not outcome.passed:
            reason = f"{prefix} recheck: busbw {figure:.3g} GB/s < {floor:.3g} with {partner}"
            ssh.run(
                admin(
                    f"scontrol update nodename={shlex.quote(node)} state=drain "
                    f"reason={shlex.quote(reason[:200])}",
                    user,
                ),
                check=False,
            )
        ssh.run(admin(f"scontrol delete reservation={shlex.quote(name)}", user), check=False)
    return outcome
