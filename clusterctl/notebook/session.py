"""The loop every notebook runs, whatever schedules it: submit, wait for the job (its pending
reason shown), wait for JupyterLab's URL, hold the tunnel, and on Ctrl-C, SIGTERM, the job's end
or a broken tunnel cancel the job and say so. Every wait has a deadline."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from clusterctl.notebook.slurm import JobState, LabUrl, parse_url
from clusterctl.validate import CouldNotRun

Say = Callable[[str], None]


class Notebook(Protocol):
    job: str

    def submit(self) -> str: ...
    def state(self) -> JobState | None: ...
    def log(self) -> str: ...
    def tunnel_argv(self, url: LabUrl, local_port: int) -> list[str]: ...
    def cancel(self) -> None: ...
    def remove_log(self) -> None: ...


@dataclass(frozen=True)
class Limits:
    start_s: float = 1800.0
    """How long the job may wait in the queue."""
    url_s: float = 900.0
    """From the job's start to JupyterLab's URL: the first notebook installs JupyterLab."""
    cancel_s: float = 120.0
    """From scancel to the job leaving the queue (Slurm's KillWait is 30 s by default)."""
    poll_s: float = 5.0
    hold_poll_s: float = 30.0
    """While the notebook serves: how often the job is looked at (one ssh login each)."""


class NotStarted(Exception):
    """The notebook never served: the job failed, or a wait ran out."""


@dataclass
class Clock:
    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], float] = time.monotonic


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt, so the job is cancelled either way."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, old_int)


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """A second Ctrl-C while the job is being cancelled does not stop the cancelling."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = [signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)]
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old[0])
        signal.signal(signal.SIGTERM, old[1])


def _last_line(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def wait_running(nb: Notebook, say: Say, limits: Limits, clock: Clock) -> str:
    """The node the job runs on; the pending reason said each time it changes."""
    deadline, shown = clock.now() + limits.start_s, ""
    while clock.now() < deadline:
        state = nb.state()
        if state is None:
            raise NotStarted(f"job {nb.job} left the queue before it ran: {_last_line(nb.log())}")
        if state.state == "RUNNING":
            return state.node
        if (seen := f"{state.state} ({state.reason})") != shown:
            say(f"notebook: job {nb.job} {seen}")
            shown = seen
        clock.sleep(limits.poll_s)
    raise NotStarted(f"job {nb.job} still {shown or 'queued'} after {limits.start_s:g} s")


def wait_url(nb: Notebook, say: Say, limits: Limits, clock: Clock) -> LabUrl:
    deadline, shown = clock.now() + limits.url_s, ""
    while clock.now() < deadline:
        log = nb.log()
        if url := parse_url(log):
            return url
        if nb.state() is None:
            raise NotStarted(f"job {nb.job} ended before JupyterLab served: {_last_line(log)}")
        if log.strip() and (line := _last_line(log)) != shown:
            say(f"notebook: {line}")
            shown = line
        clock.sleep(limits.poll_s)
    raise NotStarted(f"JupyterLab did not serve within {limits.url_s:g} s of job {nb.job}'s start")


def hold(nb: Notebook, tunnel: subprocess.Popen, limits: Limits, clock: Clock) -> str:
    """Until the job ends or the tunnel breaks: which one, in words. A look at the job that
    cannot log in is let pass: the tunnel's own end says when the way there is gone."""
    while True:
        clock.sleep(limits.hold_poll_s)
        if (code := tunnel.poll()) is not None:
            raise NotStarted(f"the tunnel ended (ssh exit {code})")
        with contextlib.suppress(CouldNotRun):
            if nb.state() is None:
                return "it ended (its time limit)"


def finish(nb: Notebook, say: Say, limits: Limits, clock: Clock) -> bool:
    """Cancel the job and wait until it has left the queue; False if it has not in time, or
    the cluster could not be reached to cancel it."""
    try:
        return _cancel(nb, say, limits, clock)
    except CouldNotRun as exc:
        say(f"notebook: could not cancel job {nb.job}: {exc}")
        return False


def _cancel(nb: Notebook, say: Say, limits: Limits, clock: Clock) -> bool:
    nb.cancel()
    deadline = clock.now() + limits.cancel_s
    while nb.state() is not None:
        if clock.now() >= deadline:
            say(f"notebook: job {nb.job} still in the queue {limits.cancel_s:g} s after cancel")
            return False
        clock.sleep(min(limits.poll_s, 2.0))
    nb.remove_log()
    return True


def _stop(tunnel: subprocess.Popen | None) -> None:
    if tunnel is not None and tunnel.poll() is None:
        tunnel.terminate()
        try:
            tunnel.wait(timeout=10)
        except subprocess.TimeoutExpired:
            tunnel.kill()


def run_notebook(
    nb: Notebook,
    *,
    say: Say,
    show_url: Say,
    limits: Limits | None = None,
    clock: Clock | None = None,
    popen: Callable[..., subprocess.Popen] = subprocess.Popen,
    local_port: int | None = None,
) -> int:
    """0 once the notebook served and was ended (Ctrl-C, SIGTERM, its time limit); 3 if it
    never served or its tunnel broke, or the job would not leave the queue."""
    limits, clock = limits or Limits(), clock or Clock()
    tunnel: subprocess.Popen | None = None
    code, why = 0, "Ctrl-C"
    try:
        with interruptible():
            job = nb.submit()
            say(f"notebook: job {job} submitted; Ctrl-C cancels it")
            node = wait_running(nb, say, limits, clock)
            say(f"notebook: job {job} running on {node}; waiting for JupyterLab")
            url = wait_url(nb, say, limits, clock)
            port = local_port or free_port()
            tunnel = popen(nb.tunnel_argv(url, port), stdin=subprocess.DEVNULL)
            show_url(url.local(port))
            say(f"notebook: open the URL above; Ctrl-C ends the notebook and cancels job {job}")
            why = hold(nb, tunnel, limits, clock)
    except KeyboardInterrupt:
        pass
    except (NotStarted, CouldNotRun) as exc:
        code, why = 3, str(exc)
    with uninterrupted():
        _stop(tunnel)
        if not nb.job:  # stopped before sbatch answered: no job id to cancel
            say(f"notebook: no job submitted ({why})")
            return code or 130
        gone = finish(nb, say, limits, clock)
    end = "nothing of it runs any more" if gone else f"check `squeue -j {nb.job}` yourself"
    say(f"notebook: job {nb.job} cancelled ({why}); {end}")
    return code if gone else 3
