"""Take suspect nodes out of service: drain in Slurm, cordon in Kubernetes.

The reason starts with the stack's drain prefix (healthChecks.drainPrefix, "gpucl:"), so the
health agent resumes only drains it owns and never someone else's."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from clusterctl.nccl.localize import Suspect
from clusterctl.validate.transport import Ssh

DEFAULT_PREFIX = "gpucl:"


def drain_reason(prefix: str, suspect: Suspect, floor_gbps: float) -> str:
    worst = min((f.busbw_gbps for f in suspect.figures if not f.passed), default=None)
    figure = f"busbw {worst:.3g} GB/s < {floor_gbps:.3g}" if worst is not None else "no result"
    partners = sorted({n for f in suspect.figures if not f.passed for n in f.pair} - {suspect.node})
    text = f"{prefix} nccl: {figure} with {','.join(partners) or 'no partner'} ({suspect.reason})"
    return text[:200]  # keep it readable in sinfo -R


def slurm_drain_commands(reasons: dict[str, str]) -> list[str]:
    return [
        f"scontrol update nodename={shlex.quote(node)} state=drain reason={shlex.quote(reason)}"
        for node, reason in sorted(reasons.items())
    ]


def drain_slurm(ssh: Ssh, reasons: dict[str, str]) -> list[str]:
    for command in slurm_drain_commands(reasons):
        ssh.run(command)
    return sorted(reasons)


def cordon_k8s(client: object, reasons: dict[str, str]) -> list[str]:
    cordon = getattr(client, "cordon_node", None)
    if cordon is None:
        raise TypeError("this Kubernetes client cannot cordon nodes")
    for node, reason in sorted(reasons.items()):
        cordon(node, reason)
    return sorted(reasons)


def reasons_for(suspects: Sequence[Suspect], prefix: str, floor_gbps: float) -> dict[str, str]:
    """Only nodes localised as `bad` are drained; flaky and unresolved ones are reported."""
    return {s.node: drain_reason(prefix, s, floor_gbps) for s in suspects if s.status == "bad"}
