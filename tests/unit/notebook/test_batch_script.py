"""The notebook's batch script, run here with a stand-in JupyterLab in a pre-made venv: it
serves on the node's address and writes the URL to its log; the SIGTERM that Slurm's scancel and
time limit send ends it and leaves nothing: JupyterLab's process gone, its runtime dir removed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from clusterctl.notebook.slurm import JOB_NAME, batch_script, parse_url

FAKE_LAB = """#!/bin/bash
# stands in for jupyter-lab: prints the URL as JupyterLab 4 does, then serves until killed
for a in "$@"; do case $a in --ip=*) ip=${a#--ip=};; --port=*) port=${a#--port=};; esac; done
echo "[I ServerApp] Jupyter Server 2.17.0 is running at:" >&2
echo "[I ServerApp] http://$ip:$port/lab?token=0f3a9c51b2e84d7a" >&2
touch "$JUPYTER_RUNTIME_DIR/jpserver-$$.json"
exec -a "$0 serving" sleep 600  # still named by its path, for pgrep -f
"""


def _kill_group(pgid: int) -> None:
    """Whatever of the test's own process group is left, should an assertion fail."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _wait(what, probe, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)
    return value


def test_the_script_serves_then_sigterm_leaves_nothing(tmp_path: Path) -> None:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    venv = home / ".clusterctl" / "jupyterlab-9.9.9"
    (venv / "bin").mkdir(parents=True)
    tmp.mkdir()
    (venv / ".complete").touch()  # installed by an earlier notebook: no pip here
    lab = venv / "bin" / "jupyter-lab"
    lab.write_text(FAKE_LAB)
    lab.chmod(0o755)
    log = tmp_path / "job.log"
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "TMPDIR": str(tmp),
           "SLURM_JOB_ID": "17"}  # fmt: skip
    with log.open("w") as out:
        job = subprocess.Popen(["bash", "-c", batch_script("9.9.9")], env=env, stdout=out,
                               stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    runtime = tmp / f"{JOB_NAME}-17"
    try:
        url = _wait("the URL in the log", lambda: parse_url(log.read_text()))
        assert url.port > 0 and not url.host.startswith("127.")
        assert any(runtime.glob("jpserver-*.json"))
        # what Slurm does on scancel: SIGTERM to every process of the job
        os.killpg(job.pid, signal.SIGTERM)
        assert job.wait(timeout=60) != 0
        assert not runtime.exists()
        gone = _wait("jupyter-lab gone", lambda: subprocess.run(
            ["pgrep", "-f", str(lab)], capture_output=True).returncode == 1)  # fmt: skip
        assert gone
    finally:
        _kill_group(job.pid)


def test_the_script_alone_ends_jupyterlab_on_sigterm(tmp_path: Path) -> None:
    """Where SIGTERM reaches only the script (a step's signal to its task), its EXIT trap
    stops JupyterLab itself."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    venv = home / ".clusterctl" / "jupyterlab-9.9.9"
    (venv / "bin").mkdir(parents=True)
    tmp.mkdir()
    (venv / ".complete").touch()
    lab = venv / "bin" / "jupyter-lab"
    lab.write_text(FAKE_LAB)
    lab.chmod(0o755)
    log = tmp_path / "job.log"
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "TMPDIR": str(tmp),
           "SLURM_JOB_ID": "18"}  # fmt: skip
    with log.open("w") as out:
        job = subprocess.Popen(["bash", "-c", batch_script("9.9.9")], env=env, stdout=out,
                               stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        _wait("the URL in the log", lambda: parse_url(log.read_text()))
        job.send_signal(signal.SIGTERM)
        assert job.wait(timeout=60) == 143
        gone = _wait("jupyter-lab gone", lambda: subprocess.run(
            ["pgrep", "-f", str(lab)], capture_output=True).returncode == 1)  # fmt: skip
        assert gone
    finally:
        _kill_group(job.pid)
    assert not (tmp / f"{JOB_NAME}-18").exists()
