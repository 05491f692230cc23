"""`clusterctl up`: `pulumi up` through the Automation API, then the outputs and the cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console

from clusterctl.lifecycle.errors import OperationFailed, failure_lines
from clusterctl.lifecycle.progress import live

VALIDATION_OUTPUT = "ncclValidation"
"""The stack output the program's validation hook writes: {"verdict": "pass"|"warn"|"fail", ...}."""


@dataclass(frozen=True)
class UpOutcome:
    outputs: dict[str, Any]
    secret_outputs: frozenset[str]
    changes: dict[str, int]

    def public_outputs(self) -> dict[str, Any]:
        return {k: ("[secret]" if k in self.secret_outputs else v) for k, v in self.outputs.items()}

    @property
    def verdict(self) -> dict[str, Any] | None:
        value = self.outputs.get(VALIDATION_OUTPUT)
        return value if isinstance(value, dict) else None


def run_up(stack: Any, console: Console) -> UpOutcome:
    from pulumi.automation import CommandError

    with live(console, f"pulumi up -s {stack.name}") as (log, on_event):
        try:
            result = stack.up(on_event=on_event, color="never")
        except CommandError as exc:
            raise OperationFailed("up", failure_lines(exc, log.errors)) from None
    return UpOutcome(
        outputs={k: v.value for k, v in result.outputs.items()},
        secret_outputs=frozenset(k for k, v in result.outputs.items() if v.secret),
        changes=dict(result.summary.resource_changes or {}),
    )
