"""`sandbox exec` has no hidden limit, streams the command's output, stops
it (everything it started) only at the user's --timeout, and passes Ctrl-C through. A stub
command stands in for nsenter into a node."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[3]

# Prints, starts a grandchild (the command inside the node), then waits; SIGINT ends it with 3.
STUB = """
import signal, subprocess, sys, time
child = subprocess.Popen(["sleep", "300"])
open(sys.argv[1], "w").write(str(child.pid))
print("started", flush=True)
def on_int(*_):
    print("got SIGINT", flush=True)
    child.kill()
    sys.exit(3)
signal.signal(signal.SIGINT, on_int)
time.sleep(float(sys.argv[2]))
child.kill()
print("finished", flush=True)
"""


def driver(tmp_path: Path, sleep_s: float, timeout: float | None) -> subprocess.Popen[str]:
    """clusterctl's attach.run_attached on the stub, in a process of its own (as the CLI runs)."""
    stub = tmp_path / "stub.py"
    stub.write_text(STUB)
    code = (
        "import sys; from clusterctl.sandbox.vm.attach import run_attached; "
        f"sys.exit(run_attached([sys.executable, {str(stub)!r}, {str(tmp_path / 'pid')!r}, "
        f"'{sleep_s}'], timeout={timeout!r}))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_command_longer_than_the_old_limit_is_waited_for_and_streams(tmp_path: Path) -> None:
    proc = driver(tmp_path, sleep_s=1.0, timeout=None)
    first = proc.stdout.readline()  # streamed: there before the command ends
    assert first == "started\n" and proc.poll() is None
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "finished" in out


def test_timeout_stops_the_command_and_what_it_started_keeping_its_output(tmp_path: Path) -> None:
    proc = driver(tmp_path, sleep_s=300, timeout=1.0)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 124
    assert "started" in out
    grandchild = int((tmp_path / "pid").read_text())
    assert not alive(grandchild), "the command inside the node kept running"


def test_ctrl_c_is_passed_to_the_command_and_its_exit_code_comes_back(tmp_path: Path) -> None:
    proc = driver(tmp_path, sleep_s=300, timeout=None)
    wait_for(tmp_path / "pid")
    assert proc.stdout.readline() == "started\n"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert "got SIGINT" in out
    assert proc.returncode == 3


def test_exec_has_no_default_limit_and_takes_timeout(monkeypatch) -> None:
    from clusterctl.cli import app
    from clusterctl.sandbox.vm import attach, boot

    calls: list[tuple[list[str], float | None]] = []
    monkeypatch.setattr(boot, "status", lambda w: {"sched": {"role": "scheduler"}})
    monkeypatch.setattr(boot, "exec_argv", lambda w, n, cmd: ["nsenter", n, *cmd])
    monkeypatch.setattr(
        attach, "run_attached", lambda argv, timeout=None: calls.append((argv, timeout)) or 7
    )
    runner = CliRunner()
    got = runner.invoke(app, ["sandbox", "exec", "--", "sleep", "600"])
    assert got.exit_code == 7
    assert calls == [(["nsenter", "sched", "sleep", "600"], None)]
    got = runner.invoke(app, ["sandbox", "exec", "--timeout", "5", "--", "true"])
    assert calls[-1][1] == 5.0
