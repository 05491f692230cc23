"""Ctrl-C during `validate --nccl` cancels what it started on the cluster (the
Slurm job ids it submitted; on Kubernetes the MPIJob), says so, then exits 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterctl.validate.k8s_launcher import K8sLauncher
from clusterctl.validate.slurm_launcher import SlurmJob, SlurmLauncher
from tests.validate.test_slurm import RecordedSsh

ROOT = Path(__file__).resolve().parents[2]


class InterruptingSsh(RecordedSsh):
    """Ctrl-C lands while the n-th command matching `at` runs."""

    def __init__(self, answers, at: str, nth: int = 1) -> None:
        super().__init__(answers)
        self.at, self.left = at, nth

    def run(self, command, **kw):
        if command.startswith(self.at):
            self.left -= 1
            if self.left == 0:
                self.asked.append(command)
                raise KeyboardInterrupt
        return super().run(command, **kw)


def _job() -> SlurmJob:
    return SlurmJob(name="clusterctl-nccl-gpu-pg0-1-gpu-pg0-2", nodes=2, gpus_per_node=8)


def test_ctrl_c_while_waiting_cancels_the_submitted_job(capsys) -> None:
    ssh = InterruptingSsh(
        [("mkdir -p", "4242\n", 0), ("squeue", "4242 RUNNING None\n", 0), ("scancel", "", 0)],
        at="squeue",
        nth=2,
    )
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    with pytest.raises(KeyboardInterrupt):
        launcher.run(_job())
    assert "scancel 4242" in ssh.asked
    assert "cancelled Slurm job(s) 4242" in capsys.readouterr().err


def test_ctrl_c_during_a_submission_cancels_the_queued_ones_and_the_one_in_flight() -> None:
    ssh = InterruptingSsh(
        [("mkdir -p", "11\n", 0), ("scancel", "", 0), ("scancel", "", 0)], at="mkdir -p", nth=2
    )
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    with pytest.raises(KeyboardInterrupt):
        launcher.run_many([_job(), _job()])
    assert "scancel 11" in ssh.asked
    assert "scancel --name=clusterctl-nccl-gpu-pg0-1-gpu-pg0-2" in ssh.asked


def test_ctrl_c_deletes_the_mpijob_and_says_so() -> None:
    said: list[str] = []
    deleted: list[str] = []

    class Client:
        def apply(self, docs):
            pass

        def create_mpijob(self, ns, manifest):
            return manifest

        def get_mpijob(self, ns, name):
            raise KeyboardInterrupt

        def delete_mpijob(self, ns, name):
            deleted.append(f"{ns}/{name}")

    launcher = K8sLauncher(Client(), sleep=lambda _: None, say=said.append)
    manifest = {"metadata": {"namespace": "nccl", "name": "clusterctl-nccl"}}
    with pytest.raises(KeyboardInterrupt):
        launcher.run(manifest)
    assert deleted == ["nccl/clusterctl-nccl"]
    assert said == ["interrupted: deleted MPIJob nccl/clusterctl-nccl"]


FAKE_SSH = """#!/bin/sh
# a scheduler that queues job 4242 and keeps it RUNNING; every command line is recorded
for last; do :; done
echo "$last" >> "$FAKE_SSH_LOG"
case "$last" in
  *"sbatch --parsable"*) cat >/dev/null; echo 4242 ;;
  squeue*) echo "4242 RUNNING None" ;;
  *) : ;;
esac
"""


def test_ctrl_c_in_validate_cancels_the_job_says_so_and_exits_130(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text(FAKE_SSH)
    (bin_dir / "ssh").chmod(0o755)
    log = tmp_path / "ssh.log"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_SSH_LOG": str(log),
        "PYTHONPATH": str(ROOT),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterctl", "validate", "--nccl", "--host", "u@sched",
         "--nodes", "2", "--sku", "Standard_ND96isr_H100_v5"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while "squeue" not in (log.read_text() if log.exists() else ""):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the job was never waited on"
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "cancelled Slurm job(s) 4242" in err
    assert "scancel 4242" in log.read_text().splitlines()
    assert "Traceback" not in err
