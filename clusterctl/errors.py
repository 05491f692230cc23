"""Errors a user can fix: each carries one line per problem, printed without a traceback."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    level: Level
    message: str
    field: str | None = None
    """Dotted path as the user wrote it, e.g. gpu-clusters:cluster.partitions[0].sku."""

    def line(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class UserError(Exception):
    """Bad input: the CLI prints each problem on its own line and exits 2."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class SpecError(UserError):
    """The stack's cluster config does not validate."""

    def __init__(self, findings: list[Finding]):
        self.findings = findings
        super().__init__([f.line() for f in findings])
