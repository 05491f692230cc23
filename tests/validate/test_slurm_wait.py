"""SlurmLauncher.wait: a running job past its time "did not finish" (only the unfinished jobs are
cancelled), a node that recovers within the grace does not end the wait, and a log (no terminal)
gets one plain line per change of the jobs' states."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from rich.console import Console

import clusterctl.validate.slurm_launcher as sl
from clusterctl.validate import CouldNotRun
from clusterctl.validate.slurm_launcher import SlurmLauncher
from tests.validate.test_slurm import RecordedSsh


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each reading of the clock is 20 s after the one before."""
    ticks = iter(range(0, 100_000, 20))
    monkeypatch.setattr(sl.time, "monotonic", lambda: float(next(ticks)))
    yield


def test_a_running_job_past_its_time_did_not_finish_and_only_it_is_cancelled(clock) -> None:
    ssh = RecordedSsh(
        [("squeue -h -j 5,6", "6 RUNNING None\n", 0), ("sacct -n -X -P -j 5", "COMPLETED\n", 0)]
        + [("squeue -h -j 6", "6 RUNNING None\n", 0)] * 5
        + [("scancel 6", "", 0)]
    )
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    with pytest.raises(CouldNotRun, match=r"NCCL job did not finish within 50 s \(6 RUNNING\)"):
        launcher.wait(["5", "6"], timeout_s=50)
    assert [c for c in ssh.asked if c.startswith("scancel")] == ["scancel 6"]


def test_a_node_that_recovers_within_the_grace_does_not_end_the_wait(clock) -> None:
    ssh = RecordedSsh(
        [("squeue", "9 RUNNING None\n", 0)] * 4
        + [("sinfo", "n1 allocated*\n", 0)] * 2
        + [("sinfo", "n1 allocated\n", 0)] * 2
        + [("squeue", "", 0), ("sacct", "COMPLETED\n", 0)]
    )
    launcher = SlurmLauncher(ssh, sleep=lambda _: None)
    assert launcher.wait(["9"], timeout_s=1000, nodes=["n1"]) == ["COMPLETED"]
    assert not [c for c in ssh.asked if c.startswith("scancel")]


def test_a_log_gets_one_plain_line_per_change_of_state(clock) -> None:
    ssh = RecordedSsh(
        [("squeue", "3 PENDING Resources\n", 0)] * 3
        + [("squeue", "3 RUNNING None\n", 0)] * 2
        + [("squeue", "", 0), ("sacct", "COMPLETED\n", 0)]
    )
    out = io.StringIO()
    launcher = SlurmLauncher(ssh, sleep=lambda _: None, console=Console(file=out, width=200))
    assert launcher.wait(["3"], timeout_s=1000, what="training") == ["COMPLETED"]
    lines = [line.split(" (")[0] for line in out.getvalue().splitlines()]
    assert lines == [
        "training job(s) 3: 3 PENDING Resources",
        "training job(s) 3: 3 RUNNING",
        "training job(s) 3: 3 COMPLETED",
    ]
