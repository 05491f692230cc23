"""`--from-log -` reads the log from stdin, as `kubectl apply -f -` does: the verdict is the one
the file gives, messages name `stdin`, and a terminal on stdin is refused instead of waited on."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.cli.conftest import H100, H100_LOG, ROOT, error_lines


def _validate(*args: str, stdin) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", "validate", "--nccl", *args],
        stdin=stdin, capture_output=True, text=True, cwd=ROOT, env=env, timeout=180,
    )  # fmt: skip


def test_a_log_piped_in_gets_the_verdict_its_file_gets() -> None:
    with H100_LOG.open() as log:
        piped = _validate("--from-log", "-", "--sku", H100, "--json", stdin=log)
    named = _validate("--from-log", str(H100_LOG), "--sku", H100, "--json",
                      stdin=subprocess.DEVNULL)  # fmt: skip
    assert piped.returncode == named.returncode == 0, piped.stdout + piped.stderr
    assert '"status": "pass"' in piped.stdout
    assert piped.stdout.replace("stdin", str(H100_LOG)) == named.stdout.replace(
        "stdin", str(H100_LOG)
    )


def test_a_problem_with_the_piped_log_names_stdin() -> None:
    with H100_LOG.open() as piped:
        res = _validate("--from-log", "-", "--sku", H100, "--nodes", "3", stdin=piped)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = error_lines(res.stderr)
    assert line.startswith("error: stdin spans 2 host(s)") and "--nodes is 3" in line


def test_a_terminal_on_stdin_is_refused_not_waited_on() -> None:
    main, tty = os.openpty()
    try:
        res = _validate("--from-log", "-", "--sku", H100, stdin=tty)
    finally:
        os.close(main)
        os.close(tty)
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert "--from-log -" in line and "stdin" in line and "pipe it in" in line
