"""The VM sandbox's state file: each resource is recorded (atomically) before it is created, so
`teardown` can undo a run that died anywhere, SIGKILL included. Teardown is idempotent."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATE_FILE = "vm-sandbox-state.json"
# Released in this order: processes, whatever is left in their cgroups, then what they used.
KINDS = ("process", "cgroup", "mount", "loop", "netns", "dir")


@dataclass
class Resource:
    kind: str
    name: str
    """process: a role ("nspawn@node"); mount/dir/cgroup: a path; netns: a name; loop: its file."""
    pid: int | None = None
    start_time: str | None = None


@dataclass
class VmState:
    workdir: str
    sid: str
    phase: str = "starting"
    slurm: str = ""
    """The Slurm release the nodes install (repo.SLURM_VERSIONS); "" in a state from before."""
    nodes: dict[str, dict] = field(default_factory=dict)
    """node name -> {"role", "address", "netns", "root", "pid" (nspawn), "init" (its PID 1)}."""
    lab: dict = field(default_factory=dict)
    resources: list[Resource] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return Path(self.workdir) / STATE_FILE

    def save(self) -> None:
        tmp = self.path.with_name(STATE_FILE + ".tmp")
        with open(tmp, "w") as f:
            json.dump(asdict(self), f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def record(self, kind: str, name: str, **extra: object) -> Resource:
        assert kind in KINDS, kind
        res = Resource(kind=kind, name=name, **extra)  # type: ignore[arg-type]
        self.resources.append(res)
        self.save()
        return res

    def set_pid(self, res: Resource, pid: int) -> None:
        res.pid, res.start_time = pid, proc_start_time(pid)
        self.save()


@contextlib.contextmanager
def lock(workdir: str | os.PathLike[str]) -> Iterator[None]:
    """Held while a running sandbox's state is read, changed and saved by more than one process
    (the lab server's power stand-in, `sandbox fault`)."""
    with open(Path(workdir) / "state.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def sandbox_id(workdir: str | os.PathLike[str]) -> str:
    """Short id of a workdir: names its namespaces and cgroups (gpucl-<sid>-...)."""
    return hashlib.sha1(str(Path(workdir).resolve()).encode()).hexdigest()[:6]


def load(workdir: str | os.PathLike[str]) -> VmState | None:
    """The state file; after a SIGKILL during a save, whichever of it and its temporary copy
    holds the most resources (the copy is newer; a torn copy is ignored)."""
    path = Path(workdir).resolve() / STATE_FILE
    best: VmState | None = None
    for candidate in (path, path.with_name(STATE_FILE + ".tmp")):
        try:
            data = json.loads(candidate.read_text())
        except (OSError, ValueError):
            continue
        resources = [Resource(**r) for r in data.pop("resources", [])]
        state = VmState(**data, resources=resources)
        if best is None or len(state.resources) > len(best.resources):
            best = state
    if best is None and path.with_name(STATE_FILE + ".tmp").exists():
        # a torn first save: nothing was recorded, so nothing was made; only the copy is left
        return VmState(workdir=str(path.parent), sid=sandbox_id(path.parent))
    return best


def proc_start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(res: Resource) -> bool:
    return res.pid is not None and proc_start_time(res.pid) == res.start_time


def stop_process(res: Resource, grace: float) -> None:
    """SIGTERM (nspawn turns it into a clean poweroff of the container), then SIGKILL."""
    if not _alive(res):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(res.pid, signal.SIGTERM)  # type: ignore[arg-type]
    deadline = time.monotonic() + grace
    while _alive(res) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(res):
        with contextlib.suppress(ProcessLookupError):
            os.kill(res.pid, signal.SIGKILL)  # type: ignore[arg-type]
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(res.pid, os.WNOHANG)  # type: ignore[arg-type]


def _mounted(path: str) -> bool:
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


_LOOP_GRACE = 60.0
"""The kernel drops a loop device after the last close of its unmounted file system, which
flushes what the nodes wrote: 10 s was not enough once on a loaded host (three sandboxes at once,
each 4 GiB of disks), the device gone a little later."""


def _loops_on(backing: str) -> list[str]:
    listing = subprocess.run(
        ["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"], capture_output=True, text=True
    ).stdout
    devs = []
    for line in listing.splitlines():
        dev, _, back = line.strip().partition(" ")
        if back.strip().removesuffix(" (deleted)") == backing:  # a removed file, too
            devs.append(dev)
    return devs


def _detach_loops(backing: str, grace: float) -> None:
    """Detach every loop device on `backing`, waiting up to `grace` seconds: the kernel clears a
    `mount -o loop` device after the unmount's last close, which may come a moment later (CI saw
    one still listed right after `down`), and `losetup -d` on a device still held answers busy."""
    deadline = time.monotonic() + grace
    while devs := _loops_on(backing):
        for dev in devs:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        if time.monotonic() >= deadline or not _loops_on(backing):
            return
        time.sleep(0.2)


def release(res: Resource, grace: float = 10.0) -> None:
    if res.kind == "process":
        stop_process(res, grace)
    elif res.kind == "mount":
        while _mounted(res.name):
            if subprocess.run(["umount", res.name], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", res.name], capture_output=True)
    elif res.kind == "loop":  # name: the backing file; detach every device still on it
        _detach_loops(res.name, _LOOP_GRACE)
        if left := _loops_on(res.name):
            raise OSError(f"{', '.join(left)} still attached after {_LOOP_GRACE:g} s")
    elif res.kind == "netns":
        if Path("/run/netns", res.name).exists():
            subprocess.run(["ip", "netns", "delete", res.name], capture_output=True)
    elif res.kind == "cgroup":
        from ..cgroups import remove_tree

        # a loaded host: exiting tasks take a while (over 30 s seen, a `down` of 70 s)
        remove_tree(Path(res.name), timeout=90.0)
    elif res.kind == "dir":
        shutil.rmtree(res.name, ignore_errors=True)


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4].replace("\\040", " ") for line in f]


def _remove_dirs(paths: list[str], log=print) -> None:
    """The nodes' disks, all at once: `rm -rf` per directory in parallel (a 16-node sandbox holds
    ~200k files; Python's rmtree one after another took ~8 s of a 13 s `down`). A directory that
    still holds a mount (one that failed to come off; a bind mount shares its source's device,
    so `rm --one-file-system` would go through it) is left alone and reported."""
    mounts = _mount_points()
    busy = {p for p in paths if any(m == p or m.startswith(p.rstrip("/") + "/") for m in mounts)}
    procs = [
        subprocess.Popen(["rm", "-rf", "--one-file-system", "--", p], stderr=subprocess.DEVNULL)
        for p in paths
        if p not in busy and os.path.lexists(p)
    ]
    for proc in procs:
        proc.wait()
    for path in reversed(paths):
        if path not in busy and os.path.lexists(path):
            subprocess.run(["rm", "-rf", "--one-file-system", "--", path], capture_output=True)
        if os.path.lexists(path):
            log(
                f"down: could not remove {path}"
                + (" (a mount is still inside)" if path in busy else "")
            )


def teardown(state: VmState, log=print, grace: float = 5.0) -> None:
    """Release every recorded resource, then drop the state file. Every process gets SIGTERM at
    once (containers power off in parallel), SIGKILL after `grace` seconds in all."""
    procs = [r for r in state.resources if r.kind == "process"]
    for r in procs:
        if _alive(r):
            with contextlib.suppress(ProcessLookupError):
                os.kill(r.pid, signal.SIGTERM)  # type: ignore[arg-type]
    deadline = time.monotonic() + grace
    for r in procs:
        stop_process(r, grace=max(0.0, deadline - time.monotonic()))
    # cgroups; then mounts and loop devices together, newest first (a node's NVMe loop device
    # lives on the disks filesystem, which is a loop mount itself); then namespaces
    for kinds in (("cgroup",), ("mount", "loop"), ("netns",)):
        for res in reversed([r for r in state.resources if r.kind in kinds]):
            try:
                release(res)
            except OSError as e:
                log(f"down: could not release {res.kind} {res.name}: {e}")
    _remove_dirs([r.name for r in state.resources if r.kind == "dir"], log)
    state.path.with_name(STATE_FILE + ".tmp").unlink(missing_ok=True)
    state.path.with_name("state.lock").unlink(missing_ok=True)
    state.path.unlink(missing_ok=True)
