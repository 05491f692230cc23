"""`gpucl-power delete` against an in-memory platform: a refused delete is reported and not
waited for, a VM still listed at the deadline fails the run, and the wait polls until the VMs
are gone."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from clusterctl.power.backend import NodeRef
from clusterctl.power.program import Config, PowerProgram
from tests.power.test_power_azure import FakeSlurm

CLUSTER = "demo"
SET = f"{CLUSTER}-gpu-pg0"


class Platform:
    """Deletes what it is asked unless `refuse` names the node; a deleted VM stays listed for
    `listed_for` more reads of its scale set."""

    def __init__(self, refuse: dict[str, str] | None = None, listed_for: int = 0) -> None:
        self.ids = {"0", "1", "2"}
        self.refuse = refuse or {}
        self.listed_for = listed_for
        self.deleting: set[str] = set()
        self.lists: list[str] = []

    def delete(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        for n in nodes:
            if n.name not in self.refuse:
                self.deleting.add(n.instance_id)
        return {n.name: self.refuse.get(n.name) for n in nodes}

    def list(self, scale_set: str) -> list[str]:
        self.lists.append(scale_set)
        if self.listed_for > 0:
            self.listed_for -= 1
        else:
            self.ids -= self.deleting
        return sorted(self.ids)


def _program(
    platform: Platform, slurm: FakeSlurm | None = None
) -> tuple[PowerProgram, list[float]]:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    cfg = Config(cluster=CLUSTER, resume_wait_s=5, poll_s=1, log_file=None)
    runner = slurm or FakeSlurm()
    prog = PowerProgram(cfg, platform, runner=runner, sleep=sleep, clock=lambda: now[0])  # type: ignore[arg-type]
    prog._names = {SET: {"0": "gpu-pg0-1", "1": "gpu-pg0-2", "2": "gpu-pg0-3"}}
    prog._names_read = True
    return prog, slept


def test_a_refused_delete_is_reported_and_not_waited_for(caplog) -> None:
    platform = Platform(refuse={"gpu-pg0-2": "quota"})
    prog, slept = _program(platform)
    with caplog.at_level(logging.INFO):
        assert prog.delete(["gpu-pg0-2"]) == 1
    assert "gpu-pg0-2: delete refused: quota" in caplog.text
    assert platform.lists == [] and slept == []


def test_a_vm_still_listed_at_the_deadline_fails_the_run(caplog) -> None:
    platform = Platform(listed_for=100)
    prog, slept = _program(platform)
    with caplog.at_level(logging.INFO):
        assert prog.delete(["gpu-pg0-1", "gpu-pg0-3"]) == 1
    assert f"gpu-pg0-1: VM {SET}_0 still listed after 5 s" in caplog.text
    assert f"gpu-pg0-3: VM {SET}_2 still listed after 5 s" in caplog.text
    assert slept == [1] * 5


def test_the_wait_polls_until_the_vms_are_no_longer_listed(caplog) -> None:
    platform = Platform(listed_for=2)
    prog, slept = _program(platform)
    with caplog.at_level(logging.INFO):
        assert prog.delete(["gpu-pg0-1"]) == 0
    assert f"gpu-pg0-1: VM {SET}_0 deleted" in caplog.text
    assert slept == [1, 1] and platform.ids == {"1", "2"}


def test_one_squeue_tells_which_of_the_nodes_run_a_job(caplog) -> None:
    """A shrink of many nodes asks slurmctld once for the whole list, not once per node; a job
    that also holds a node outside the list refuses only the listed node it holds."""
    slurm = FakeSlurm()
    slurm.jobs = {"gpu-pg0-2": ["41"], "gpu-pg0-9": ["41"]}
    platform = Platform()
    prog, _ = _program(platform, slurm)
    with caplog.at_level(logging.INFO):
        assert prog.delete(["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-3"]) == 1
    assert len(slurm.squeues) == 1
    assert "gpu-pg0-2: runs a job; its VM is not deleted" in caplog.text
    assert platform.deleting == {"0", "2"}
