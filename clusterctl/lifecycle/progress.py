"""Engine events -> a live progress line on stderr, the error diagnostics for the report, and the
post-deploy hook's NCCL verdict (its `ncclValidation {...}` log line, clusterctl/outputs.py).

The Automation API delivers events on its own thread (a gRPC stream from CLI 3.206 on, a polled
log file before); rich's Progress is safe to update from there.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from clusterctl.outputs import NcclValidationResult, parse_validation_line

_VERB = {
    "create": "creating",
    "update": "updating",
    "delete": "deleting",
    "replace": "replacing",
    "create-replacement": "creating replacement",
    "delete-replaced": "deleting replaced",
    "refresh": "refreshing",
    "read": "reading",
}


@dataclass
class EventLog:
    """What the engine reported: finished operations, error diagnostics, the final summary, the
    onDeploy NCCL verdict."""

    done: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    summary: dict[str, int] = field(default_factory=dict)
    current: str = ""
    validation: NcclValidationResult | None = None

    def feed(self, event: Any) -> None:
        if event.resource_pre_event and not event.resource_pre_event.planning:
            meta = event.resource_pre_event.metadata
            op = str(meta.op.value)
            if op != "same":
                self.current = f"{_VERB.get(op, op)} {meta.type} {meta.urn.rsplit('::', 1)[-1]}"
        elif event.res_outputs_event:
            op = str(event.res_outputs_event.metadata.op.value)
            if op != "same":
                self.done[op] += 1
        elif event.diagnostic_event:
            message = event.diagnostic_event.message.strip()
            self.validation = parse_validation_line(message) or self.validation
            if message and event.diagnostic_event.severity == "error":
                self.errors.append(message)
        elif event.summary_event:
            self.summary = dict(event.summary_event.resource_changes or {})

    def line(self, title: str) -> str:
        counts = ", ".join(f"{op} {n}" for op, n in sorted(self.done.items()))
        parts = [title, counts, self.current]
        return " | ".join(p for p in parts if p)


@contextmanager
def live(console: Console, title: str) -> Iterator[tuple[EventLog, Any]]:
    """Yield (log, on_event): pass on_event to Stack.up/refresh/destroy."""
    log = EventLog()
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(title, total=None)
        started = time.monotonic()
        said = [""]

        def on_event(event: Any) -> None:
            log.feed(event)
            bar.update(task, description=log.line(title))
            if not console.is_terminal and log.current != said[0]:
                # a log (CI) gets a plain line per operation begun instead of the live line
                said[0] = log.current
                elapsed = time.monotonic() - started
                console.print(f"{title}: {log.current} ({elapsed:.0f} s)", highlight=False)

        yield log, on_event
    changed = ", ".join(f"{n} {op}" for op, n in sorted(log.summary.items()) if op != "same")
    console.print(f"{title}: done" + (f" ({changed})" if changed else ""), highlight=False)
