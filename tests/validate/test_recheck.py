"""--resume: a node validate drained is re-tested with a healthy partner inside a maintenance
reservation; it returns to service only when the pair passes, and the reservation never stays."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest

from clusterctl.errors import UserError
from clusterctl.validate import CouldNotRun
from clusterctl.validate.recheck import recheck_nodes
from clusterctl.validate.slurm_launcher import SlurmJob
from tests.validate.test_sweep_drain import MIB, pair_output

SINFO = (
    "n1|idle|none\n"
    "n2|idle|none\n"
    "n3|drained|gpucl-nccl: busbw 0.1 GB/s < 0.5 with n4\n"
    "n4|drained|admin: maintenance\n"
    "n5|drained|gpucl: check_gpu_count: 7 of 8\n"
    "n6|drained~|gpucl-nccl: busbw 0.2 GB/s < 0.5 with n1\n"
)


class FakeSsh:
    def __init__(self, user="azureuser"):
        self.calls: list[str] = []
        self.target = SimpleNamespace(user=user)

    def run(self, cmd: str, check: bool = True, **_):
        self.calls.append(cmd)
        out = SINFO if cmd.startswith("sinfo") else ""
        return subprocess.CompletedProcess(cmd, 0, out, "")


class FakeLauncher:
    def __init__(self, gbps_of_pair, fail=False):
        self.jobs: list[SlurmJob] = []
        self.gbps_of_pair, self.fail = gbps_of_pair, fail

    def run(self, job: SlurmJob, timeout_s=None):
        self.jobs.append(job)
        if self.fail:
            raise CouldNotRun("NCCL job never started within 60 s")
        pair = job.nodelist
        return SimpleNamespace(output=pair_output(pair, self.gbps_of_pair(pair)), job_id="7")


def _run(ssh, launcher, nodes, floor=0.5):
    job = SlurmJob(nodes=2, benchmark="probe", time_limit_min=10)
    return recheck_nodes(
        ssh, launcher, job, nodes, health_prefix="gpucl:", floor_gbps=floor, gate_bytes=MIB
    )


def test_a_node_whose_pair_passes_returns_to_service_inside_a_reservation() -> None:
    ssh, launcher = FakeSsh(), FakeLauncher(lambda pair: 1.0)
    (r,) = _run(ssh, launcher, ["n3"])
    assert r.passed and r.partner == "n1"
    create = next(i for i, c in enumerate(ssh.calls) if "create reservation" in c)
    resume = next(i for i, c in enumerate(ssh.calls) if "state=resume" in c)
    delete = next(i for i, c in enumerate(ssh.calls) if "delete reservation" in c)
    assert create < resume < delete
    assert "flags=maint,ignore_jobs" in ssh.calls[create] and "nodes=n3,n1" in ssh.calls[create]
    assert all(c.startswith("sudo -n scontrol") for c in ssh.calls if "scontrol" in c)
    assert launcher.jobs[0].reservation == "gpucl-recheck-n3"
    assert not any("state=drain" in c for c in ssh.calls)


def test_a_node_still_slow_is_drained_again_with_the_validation_prefix() -> None:
    ssh, launcher = FakeSsh(user="root"), FakeLauncher(lambda pair: 0.1)
    (r,) = _run(ssh, launcher, ["n3"])
    assert not r.passed
    (drain,) = [c for c in ssh.calls if "state=drain" in c]
    assert drain.startswith("scontrol update nodename=n3 state=drain reason='gpucl-nccl: recheck")
    assert ssh.calls[-1].startswith("scontrol delete reservation=gpucl-recheck-n3")


def test_a_job_that_never_runs_leaves_the_node_drained_and_no_reservation() -> None:
    ssh, launcher = FakeSsh(), FakeLauncher(lambda pair: 1.0, fail=True)
    with pytest.raises(CouldNotRun):
        _run(ssh, launcher, ["n3"])
    assert any("state=drain" in c for c in ssh.calls)
    assert "delete reservation" in ssh.calls[-1]


@pytest.mark.parametrize("node", ["n4", "n5", "n1", "n9"])
def test_only_drains_validate_owns_are_touched(node: str) -> None:
    ssh = FakeSsh()
    with pytest.raises(UserError, match=f"--resume {node}: not drained by validate"):
        _run(ssh, FakeLauncher(lambda pair: 1.0), [node])
    assert not any("scontrol" in c for c in ssh.calls)


def test_without_a_baseline_two_idle_nodes_set_the_floor() -> None:
    ssh = FakeSsh()
    launcher = FakeLauncher(lambda pair: 0.3 if "n3" in pair else 1.0)
    (r,) = _run(ssh, launcher, ["n3"], floor=None)
    assert launcher.jobs[0].nodelist == ("n1", "n2")  # the reference pair, first
    assert r.floor_gbps == pytest.approx(0.25, abs=0.01) and r.passed


def test_a_powered_down_node_is_lifted_with_state_idle_not_resume() -> None:
    """Drains stay through power saving, so a node validate drained is often powered down; RESUME
    there asks a deallocated VM to register (the old code), State=IDLE lifts the drain cleanly."""
    ssh, launcher = FakeSsh(), FakeLauncher(lambda pair: 1.0)
    (r,) = _run(ssh, launcher, ["n6"])
    assert r.passed
    assert "sudo -n scontrol update nodename=n6 state=idle" in ssh.calls
    assert not any("state=resume" in c for c in ssh.calls)
