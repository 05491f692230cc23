"""Process control: pods (a holder process owning a pod's namespaces) and the daemons in them.

Every process is recorded in the state file before it starts and gets its PID right after.
A pod is a network namespace (named, from netns.py) plus a private mount and UTS namespace held
by a `sleep` process: its hostname is the node name, and bind mounts give it its own /etc/hosts,
run, spool and log dirs and cgroup subtrees, as if each node were a separate machine.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from .state import Resource, SandboxError, SandboxState

HOLDER_MARK = "clusterctl-sandbox-pod"


def start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    if fields[0] == "Z":
        return None  # a zombie is as good as gone
    return int(fields[19])


def is_alive(res: Resource) -> bool:
    return res.pid is not None and start_time(res.pid) == res.start_time


def reap(pid: int) -> None:
    """Collect a child of this process, so it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def start(
    state: SandboxState,
    name: str,
    argv: Sequence[str],
    *,
    pod: str,
    log: Path,
    env: dict[str, str] | None = None,
) -> Resource:
    res = state.record("process", name, pod=pod)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,  # survive a Ctrl-C meant for the CLI
            close_fds=True,
        )
    res.pid = proc.pid
    res.start_time = start_time(proc.pid)
    state.save()
    return res


def start_holder(
    state: SandboxState,
    pod: str,
    *,
    netns: str,
    hostname: str,
    binds: list[tuple[str, str]],
    log: Path,
) -> Resource:
    """Start the process that owns a pod's mount and UTS namespaces; wait until it is set up."""
    lines = ["set -e", f"hostname {shlex.quote(hostname)}"]
    for src, dst in binds:
        state.record("mount", dst, pod=pod)
        lines.append(f"mount --bind {shlex.quote(src)} {shlex.quote(dst)}")
    mark = f"{HOLDER_MARK}:{state.workdir}:{pod}"
    lines.append(f"exec -a {shlex.quote(mark)} sleep infinity")
    argv = ["nsenter", f"--net=/run/netns/{netns}", "--", "unshare", "--mount", "--uts"]
    argv += ["--propagation", "private", "--", "bash", "-c", "\n".join(lines)]
    res = start(state, f"pod@{pod}", argv, pod=pod, log=log)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not is_alive(res):
            raise SandboxError(f"pod {pod} failed to start: {tail(log)}")
        try:
            if Path(f"/proc/{res.pid}/comm").read_text().strip() == "sleep":
                return res
        except OSError:
            pass
        time.sleep(0.01)
    raise SandboxError(f"pod {pod} did not start within 10 s: {tail(log)}")


def in_pod(state: SandboxState, pod: str) -> list[str]:
    """argv prefix that runs a command inside a pod's namespaces."""
    holder = state.process(f"pod@{pod}")
    if holder is None or not is_alive(holder):
        raise SandboxError(f"pod {pod} is not running; run `down` and `up` again")
    return ["nsenter", "-t", str(holder.pid), "-n", "-m", "-u", "--"]


def stop(resources: list[Resource], pids: Sequence[int] = (), grace: float = 3.0) -> None:
    """SIGTERM recorded processes and stray PIDs, SIGKILL what is left after `grace` seconds."""
    targets = {r.pid: r.start_time for r in resources if r.pid is not None and is_alive(r)}
    for pid in pids:
        targets.setdefault(pid, start_time(pid))
    targets = {p: t for p, t in targets.items() if t is not None and p != os.getpid()}
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        for pid, started in targets.items():
            if start_time(pid) == started:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            for pid in targets:
                reap(pid)
            targets = {p: t for p, t in targets.items() if start_time(p) == t}
            if not targets:
                return
            time.sleep(0.05)
    if targets:
        raise SandboxError(f"processes {sorted(targets)} survived SIGKILL; check them by hand")


def tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:]) or "(empty log)"
