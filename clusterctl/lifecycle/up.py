"""`clusterctl up`: `pulumi up` through the Automation API, then the outputs and the cost.

With validation.nccl.onDeploy the NCCL verdict comes from the engine events: the post-deploy
hook logs it (clusterctl/outputs.py says why it is not a stack output). A Kubernetes stack's
kubeconfig is written to the project's state folder (clusterctl/lifecycle/kubeconfig.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from clusterctl import outputs as out
from clusterctl.lifecycle.errors import OperationFailed, failure_lines
from clusterctl.lifecycle.progress import live


@dataclass(frozen=True)
class UpOutcome:
    outputs: dict[str, Any]
    secret_outputs: frozenset[str]
    changes: dict[str, int]
    validation: out.NcclValidationResult | None = None
    """The post-deploy hook's verdict, when it ran in this update."""

    def public_outputs(self) -> dict[str, Any]:
        return {
            k: (out.SECRET_MASK if k in self.secret_outputs else v) for k, v in self.outputs.items()
        }


def run_up(stack: Any, console: Console) -> UpOutcome:
    from pulumi.automation import CommandError

    with live(console, f"pulumi up -s {stack.name}") as (log, on_event):
        try:
            result = stack.up(on_event=on_event, color="never")
        except CommandError as exc:
            lines = failure_lines(exc, log.errors)
            if log.validation is not None:
                lines = [validation_text(log.validation), *lines]
            raise OperationFailed("up", lines) from None
    return UpOutcome(
        outputs={k: v.value for k, v in result.outputs.items()},
        secret_outputs=frozenset(k for k, v in result.outputs.items() if v.secret),
        changes=dict(result.summary.resource_changes or {}),
        validation=log.validation,
    )


def run_preview(stack: Any, console: Console) -> dict[str, int]:
    """`pulumi preview`: what `up` would change, by operation (create, update, replace, ...)."""
    from pulumi.automation import CommandError

    with live(console, f"pulumi preview -s {stack.name}") as (log, on_event):
        try:
            result = stack.preview(on_event=on_event, color="never")
        except CommandError as exc:
            raise OperationFailed("preview", failure_lines(exc, log.errors)) from None
    return {k: int(v) for k, v in (result.change_summary or {}).items() if v}


def validation_text(result: out.NcclValidationResult) -> str:
    return f"NCCL validation (onDeploy): {result['verdict']}: {result['message']}"


def save_kubeconfig(outcome: UpOutcome, project_dir: Path, stack: str) -> Path | None:
    """Write a Kubernetes stack's kubeconfig output to the project's state folder (0600)."""
    from clusterctl.lifecycle.kubeconfig import write_kubeconfig

    got = out.reader("up", outcome.outputs)
    value = got.get(out.KUBECONFIG) if got.kind == out.KUBERNETES else None
    if not isinstance(value, str) or not value.strip():
        return None
    return write_kubeconfig(project_dir, stack, value)
