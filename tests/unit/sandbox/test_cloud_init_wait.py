"""The boot poller asks `cloud-init status` (a Python start inside the node, ~0.45 CPU-s) once
per node, when its verdict is due, not every few rounds: on a 2-core host 25 such calls per 1+4
boot were a tenth of the nodes' own CPU time. A node whose boot ended without cloud-init's
result (disabled, crashed) is reported at once instead of waiting out the deadline."""

from __future__ import annotations

import time

from clusterctl.sandbox.vm import report
from clusterctl.sandbox.vm.vmstate import VmState


class FakeNodes:
    """Per node: the round its result.json appears (None: never) and the round its boot ends."""

    def __init__(self, result_at: dict[str, int | None], boot_over_at: dict[str, int]):
        self.result_at = result_at
        self.boot_over_at = boot_over_at
        self.round = 0
        self.status_calls: dict[str, int] = {n: 0 for n in result_at}
        self.init_of = {1000 + i: n for i, n in enumerate(result_at)}

    def run_dir_files(self, init: int):
        name = self.init_of[init]
        at = self.result_at[name]
        return "modules-final", at is not None and self.round >= at

    def cloud_init_status(self, init: int) -> dict:
        name = self.init_of[init]
        self.status_calls[name] += 1
        at = self.result_at[name]
        if at is not None and self.round >= at:
            return {"status": "done", "extended_status": "done"}
        return {"status": "disabled", "extended_status": "disabled"}

    def system_state(self, init: int) -> str:
        name = self.init_of[init]
        return "running" if self.round >= self.boot_over_at[name] else "starting"


def _wait(monkeypatch, nodes: FakeNodes, deadline_s: float = 30.0) -> dict:
    monkeypatch.setattr(report, "run_dir_files", nodes.run_dir_files)
    monkeypatch.setattr(report, "cloud_init_status", nodes.cloud_init_status)
    monkeypatch.setattr(report, "system_state", nodes.system_state)

    def tick(_s: float) -> None:
        nodes.round += 1

    monkeypatch.setattr(report.time, "sleep", tick)
    state = VmState(workdir="/nonexistent", sid="t")
    state.nodes = {n: {"init": i} for i, n in nodes.init_of.items()}
    lines: list[str] = []
    got = report.wait_cloud_init(state, time.monotonic() + deadline_s, log=lines.append)
    assert lines, "the poller printed no progress"
    return got


def test_cloud_init_status_is_asked_once_per_node_when_its_result_is_written(monkeypatch):
    nodes = FakeNodes(
        {"sched": 12, "gpu-0": 30, "gpu-1": 31},
        {"sched": 12, "gpu-0": 30, "gpu-1": 31},
    )
    got = _wait(monkeypatch, nodes)
    assert {n: s["status"] for n, s in got.items()} == {n: "done" for n in nodes.result_at}
    assert nodes.status_calls == {"sched": 1, "gpu-0": 1, "gpu-1": 1}


def test_a_node_whose_boot_ends_without_a_result_is_final_long_before_the_deadline(monkeypatch):
    nodes = FakeNodes({"sched": 3, "gpu-0": None}, {"sched": 3, "gpu-0": 7})
    t0 = nodes.round
    got = _wait(monkeypatch, nodes, deadline_s=600)
    assert got["gpu-0"]["status"] == "disabled"
    assert nodes.round - t0 <= 7 + report.BOOT_CHECK_EVERY
    assert nodes.status_calls["gpu-0"] == 1


def test_the_boot_state_is_asked_only_every_few_rounds():
    asked = []

    def boot_state() -> str:
        asked.append(1)
        return "starting"

    due = [report.verdict_due(False, r, boot_state) for r in range(20)]
    assert not any(due)
    assert len(asked) == 20 // report.BOOT_CHECK_EVERY
    assert report.verdict_due(True, 3, boot_state)
