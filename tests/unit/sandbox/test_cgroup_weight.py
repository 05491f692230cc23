"""A sandbox's nodes weigh in the CPU scheduler as the process that booted them: `nice` on
`sandbox up` (or on the e2e suite's workers) reaches the nodes' cgroup, where the nodes' own
nice values would count only among themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl.sandbox import cgroups
from clusterctl.sandbox.vm import machine
from clusterctl.sandbox.vm.vmstate import VmState


@pytest.mark.parametrize(("nice", "shares"), [(0, 1024), (10, 110), (19, 15), (-5, 3121), (40, 15)])
def test_cpu_shares_follow_the_kernels_nice_weights(nice: int, shares: int) -> None:
    assert cgroups.cpu_shares(nice) == shares


def test_a_sandbox_cgroup_gets_its_booting_process_weight_once(tmp_path: Path, monkeypatch) -> None:
    cpu, memory = tmp_path / "cpu", tmp_path / "memory"
    cpu.mkdir(), memory.mkdir()

    def make_dir(path: Path) -> None:  # as the kernel does: a new cpu cgroup has cpu.shares 1024
        path.mkdir(exist_ok=True)
        if path.parent.parent == tmp_path and path.parent.name == "cpu":
            (path / "cpu.shares").write_text("1024\n")

    monkeypatch.setattr(machine, "v1_hierarchies", lambda: [cpu, memory])
    monkeypatch.setattr(machine, "make_dir", make_dir)
    monkeypatch.setattr(machine, "CGROUP_ROOT", tmp_path)
    nice = {"now": 10}
    monkeypatch.setattr(machine.os, "getpriority", lambda *_: nice["now"])
    state = VmState(workdir=str(tmp_path), sid="abc123")

    dirs = machine.cgroup_dirs(state, "sched")
    assert dirs == [cpu / "gpucl-abc123" / "sched", memory / "gpucl-abc123" / "sched"]
    assert (cpu / "gpucl-abc123" / "cpu.shares").read_text() == "110\n"
    assert not (memory / "gpucl-abc123" / "cpu.shares").exists()
    # a node added later (a power-up by the lab server) leaves the sandbox's weight as it was
    nice["now"] = 0
    machine.cgroup_dirs(state, "gpu-1")
    assert (cpu / "gpucl-abc123" / "cpu.shares").read_text() == "110\n"
