"""Take suspect nodes out of service: drain in Slurm (Kubernetes: clusterctl.validate.k8s_nodes).

Drains are owned: the health check owns reasons starting with the stack's drain prefix
(healthChecks.drainPrefix, "gpucl:") and resumes them once its single-node checks pass; a drain
from this validation carries its own prefix ("gpucl-nccl:"), which the health check never resumes,
because a fabric fault between two nodes does not show in one node's checks. A node someone else
drained already is left as it is."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from clusterctl.nccl.localize import Suspect
from clusterctl.validate.transport import Ssh


def validation_prefix(health_prefix: str) -> str:
    """The owner prefix of validation drains: "gpucl:" -> "gpucl-nccl:"."""
    return f"{health_prefix.rstrip(':')}-nccl:"


def drain_reason(prefix: str, suspect: Suspect, floor_gbps: float) -> str:
    worst = min((f.busbw_gbps for f in suspect.figures if not f.passed), default=None)
    figure = f"{worst:.3g} GB/s < {floor_gbps:.3g}" if worst is not None else "no result"
    partners = sorted({n for f in suspect.figures if not f.passed for n in f.pair} - {suspect.node})
    with_ = ",".join(partners) or "no partner"
    text = f"{validation_prefix(prefix)} busbw {figure} with {with_} ({suspect.reason})"
    return text[:200]  # keep it readable in sinfo -R


def slurm_drain_commands(reasons: dict[str, str], user: str | None = None) -> list[str]:
    """One command per node; a node already drained (by anyone) keeps its drain and reason.
    Slurm admin commands run through `sudo -n` unless the SSH user is root."""
    sudo = "" if user in (None, "root") else "sudo -n "
    return [
        f"sinfo -h -N -n {shlex.quote(node)} -o %T | grep -qi drain || {sudo}"
        f"scontrol update nodename={shlex.quote(node)} state=drain reason={shlex.quote(reason)}"
        for node, reason in sorted(reasons.items())
    ]


def drain_slurm(ssh: Ssh, reasons: dict[str, str]) -> list[str]:
    for command in slurm_drain_commands(reasons, ssh.target.user):
        ssh.run(command)
    return sorted(reasons)


def reasons_for(suspects: Sequence[Suspect], prefix: str, floor_gbps: float) -> dict[str, str]:
    """Only nodes localised as `bad` are drained; flaky and unresolved ones are reported."""
    return {s.node: drain_reason(prefix, s, floor_gbps) for s in suspects if s.status == "bad"}
