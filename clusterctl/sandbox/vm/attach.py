"""`sandbox exec`: a command on a node, attached to this terminal as if run there.

Its output streams as it comes (nothing is captured), it runs as long as it runs (or until the
user's --timeout), and Ctrl-C reaches it: the command runs in a process group of its own, which
gets the terminal's foreground while it runs (so the terminal's Ctrl-C goes to it, and it may
read the terminal); a SIGINT, SIGTERM or SIGHUP sent to clusterctl itself is passed on to that
group. On --timeout the whole group (nsenter and what it started inside the node) is stopped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence

TIMED_OUT = 124  # as coreutils `timeout` says it
GRACE_S = 5.0
_PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run_attached(argv: Sequence[str], *, timeout: float | None = None) -> int:
    """Run `argv` attached to this terminal; its exit code (128 + N when signal N ended it), or
    TIMED_OUT when `timeout` seconds passed and it was stopped."""
    proc = subprocess.Popen(list(argv), process_group=0)
    with _foreground(proc.pid), _pass_signals_to(proc.pid):
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop_group(proc)
            return TIMED_OUT
    return 128 - code if code < 0 else code


def _stop_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=GRACE_S)
    with contextlib.suppress(ProcessLookupError):  # what it started inside the node, too
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextlib.contextmanager
def _pass_signals_to(pgid: int) -> Iterator[None]:
    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signum)

    previous = {s: signal.signal(s, forward) for s in _PASSED_ON}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def _foreground(pgid: int) -> Iterator[None]:
    """Give the terminal (if stdin is one) to `pgid` while it runs, as a shell does."""
    try:
        fd = sys.stdin.fileno()
        ours = os.tcgetpgrp(fd)
    except (OSError, ValueError, AttributeError):
        yield  # no terminal: nothing to hand over
        return
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # we are about to be in the background
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, pgid)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, ours)
        signal.signal(signal.SIGTTOU, old)
