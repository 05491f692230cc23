"""Per-node cgroup subtrees, bind-mounted over /sys/fs/cgroup/<controller> in each node's pod.

Debian's slurmd 22.05 names its cgroup root slurm_<nodename> (seen here), so the nodes of one
sandbox would not collide even without this; two sandboxes (or a host slurmd) with a node of
the same name would. Each node sees its own subtree as the hierarchy
root, like a separate machine, and `down` removes one subtree per sandbox. Only the cgroup v1
hierarchies are split (Slurm 22.05 autodetects v1 on this hybrid layout); cgroup2 is untouched.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def v1_hierarchies() -> list[Path]:
    """Mount points of the cgroup v1 hierarchies under /sys/fs/cgroup."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            mountpoint = Path(left.split()[4])
            if right.split()[0] == "cgroup" and mountpoint.parent == CGROUP_ROOT:
                found.append(mountpoint)
    return sorted(found)


# The kernel's sched_prio_to_weight (kernel/sched/core.c), nice -20 to 19.
NICE_WEIGHTS = (
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
    110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
)  # fmt: skip


def cpu_shares(nice: int) -> int:
    """The cgroup v1 cpu.shares a task at `nice` weighs in the CPU scheduler: a sandbox booted
    by `nice -n 10 clusterctl sandbox up` weighs against other groups as its booting process does
    against other tasks (the nodes' processes live in the sandbox's own cgroup, where their nice
    counts only among themselves)."""
    return NICE_WEIGHTS[min(max(nice, -20), 19) + 20]


def make_dir(path: Path) -> None:
    """mkdir a cgroup; a new cpuset cgroup gets its parent's cpus and mems or no task can join."""
    path.mkdir(exist_ok=True)
    for name in ("cpuset.cpus", "cpuset.mems"):
        if (path / name).exists() and not (path / name).read_text().strip():
            (path / name).write_text((path.parent / name).read_text())


def remove_tree(path: Path, timeout: float = 5.0) -> None:
    """rmdir a cgroup and its children, bottom-up, killing any task still inside."""
    if not path.is_dir():
        return
    deadline = time.monotonic() + timeout
    for dirpath, _, _ in sorted(os.walk(path), key=lambda w: -len(w[0])):
        while True:
            try:
                os.rmdir(dirpath)
                break
            except FileNotFoundError:
                break
            except OSError as e:
                if e.errno != errno.EBUSY or time.monotonic() > deadline:
                    raise
                for pid in Path(dirpath, "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(pid), signal.SIGKILL)
                time.sleep(0.05)
