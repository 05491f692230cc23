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


# What to do about a path the system refused, by errno name: said after the path and the reason.
_PATH_FIXES = {
    "ENOTDIR": "a part of that path is a file, not a folder: choose another path",
    "EISDIR": "that is a folder: name a file inside it",
    "EACCES": "choose a folder you may write, or change its permissions",
    "EPERM": "choose a folder you may write, or change its permissions",
    "EROFS": "that file system is read-only: choose another path",
    "ENOENT": "check the path (the folder above it must exist)",
    "ENOSPC": "free some space or choose another disk",
    "EEXIST": "remove it or choose another path",
    "ENAMETOOLONG": "choose a shorter path",
}


def path_problem(exc: OSError, what: str = "") -> str:
    """One line for an OSError about a path: `[what ]PATH: reason; the fix`."""
    import errno

    path = exc.filename if exc.filename is not None else "?"
    reason = (exc.strerror or exc.__class__.__name__).lower()
    fix = _PATH_FIXES.get(errno.errorcode.get(exc.errno or 0, ""), "check the path")
    return f"{what + ' ' if what else ''}{path}: {reason}; {fix}"


class PathError(UserError):
    """A path the user gave cannot be read or written: one line naming it and the fix."""

    def __init__(self, exc: OSError, what: str = ""):
        super().__init__(path_problem(exc, what))
