"""Ctrl-C: exit 130 at once and quietly, unless a command holds something it must cancel first.

By default SIGINT ends the process on the spot (no traceback, no half-imported module, no asyncio
"Task was destroyed" noise from the plan's mock engine shutting down). A command that started
something outside this process (a Slurm job, an MPIJob) runs that part under `cancellable()`:
there Ctrl-C raises KeyboardInterrupt, the command cancels what it started, says so, and
`clusterctl.cli.main` exits 130.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def exit_now(*_: object) -> None:
    end(EXIT_INTERRUPTED)


def end(code: int) -> None:
    """Flush and leave with `code`, skipping the interpreter's teardown (nothing of ours needs
    it): a Ctrl-C can no longer land where Python's default action or a traceback answers it."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):  # a stream closed or mid-write: exit anyway
            stream.flush()
    os._exit(code)


def install() -> None:
    """Ctrl-C exits 130 at once (the command line's entry point calls this first)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, exit_now)


@contextmanager
def cancellable() -> Iterator[None]:
    """Within: Ctrl-C raises KeyboardInterrupt, so the caller can cancel what it started."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
