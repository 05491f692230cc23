"""The sandbox's state file: every resource is recorded before it is created.

`down` walks this record, so it can clean up after `up` died anywhere (even by SIGKILL).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATE_FILE = "sandbox-state.json"

# Resource kinds, in the order `down` releases them (processes first, files last).
KINDS = ("process", "mount", "netns", "veth", "bridge", "cgroup", "file", "dir")


class SandboxError(RuntimeError):
    """A sandbox operation could not be done; the message says what to do."""


@dataclass
class Resource:
    kind: str
    name: str
    """A path, an interface or namespace name, or a process's role (e.g. "slurmd@node1")."""
    pid: int | None = None
    start_time: int | None = None
    """/proc/PID/stat start time, so a recycled PID is never signalled."""
    pod: str | None = None
    """The pod (controller or node) a process or mount belongs to."""


@dataclass
class SandboxState:
    workdir: str
    sandbox_id: str
    controller: str
    nodes: list[str]
    subnet: str
    """e.g. "10.201.7" : the bridge is .1, the controller .2, nodes .10 and up."""
    phase: str = "starting"
    """starting -> up; a state file in "starting" is what a crashed `up` leaves behind."""
    reason_prefix: str = "gpucl:"
    resources: list[Resource] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return Path(self.workdir) / STATE_FILE

    def save(self) -> None:
        data = asdict(self)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def record(self, kind: str, name: str, **extra: object) -> Resource:
        """Note a resource, durably, before it is created."""
        assert kind in KINDS, kind
        res = Resource(kind=kind, name=name, **extra)  # type: ignore[arg-type]
        self.resources.append(res)
        self.save()
        return res

    def of_kind(self, kind: str) -> list[Resource]:
        return [r for r in self.resources if r.kind == kind]

    def process(self, name: str) -> Resource | None:
        for r in reversed(self.resources):
            if r.kind == "process" and r.name == name:
                return r
        return None


def state_path(workdir: str | os.PathLike[str]) -> Path:
    return Path(workdir).resolve() / STATE_FILE


def load(workdir: str | os.PathLike[str]) -> SandboxState | None:
    path = state_path(workdir)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise SandboxError(f"cannot read sandbox state {path}: {e}; remove it by hand") from e
    resources = [Resource(**r) for r in data.pop("resources", [])]
    return SandboxState(**data, resources=resources)
