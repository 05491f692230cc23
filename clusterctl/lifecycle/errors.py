"""A Pulumi operation that failed: what to show the user instead of a CommandError dump."""

from __future__ import annotations


class OperationFailed(Exception):
    """`pulumi <op>` failed; `lines` are the engine's error diagnostics (or the CLI's stderr)."""

    def __init__(self, op: str, lines: list[str]):
        self.op = op
        self.lines = lines
        super().__init__(f"pulumi {op} failed: " + "; ".join(lines))


def failure_lines(exc: Exception, diagnostics: list[str]) -> list[str]:
    """The engine's error diagnostics if it sent any, else the error lines of stderr/stdout."""
    if diagnostics:
        return diagnostics
    stderr = getattr(exc, "stderr", None)
    text = str(exc) if stderr is None else stderr
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("error")]
    return lines or [ln.strip() for ln in text.splitlines() if ln.strip()][-3:]


def error_text(exc: Exception, diagnostics: list[str]) -> str:
    """Everything an error said, for matching known causes."""
    return "\n".join([str(exc), *diagnostics])
