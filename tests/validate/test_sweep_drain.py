"""Localisation wired to a launcher that runs pairs, and drains with our prefix."""

from __future__ import annotations

import pytest

from clusterctl.nccl.emit import format_all_reduce, row_from_times
from clusterctl.validate.drain import reasons_for, slurm_drain_commands
from clusterctl.validate.sweep import run_sweep

MIB = 1 << 20


def pair_output(pair, gbps: float, wrong: int = 0) -> str:
    t = MIB / (gbps * 1e3)
    rows = [row_from_times(MIB // 2, t / 2, t / 2, n_ranks=2),
            row_from_times(MIB, t, t, n_ranks=2, wrong=wrong)]  # fmt: skip
    return format_all_reduce(rows, hosts=list(pair))


def fake_cluster(slow: set[str], broken: set[str] = frozenset(), healthy: float = 1.0):
    rounds = []

    def run_pairs(pairs):
        rounds.append(list(pairs))
        return [
            pair_output(
                p, healthy * (0.1 if slow & set(p) else 1.0), wrong=int(bool(broken & set(p)))
            )
            for p in pairs
        ]

    return run_pairs, rounds


@pytest.mark.parametrize("n", [4, 8, 16])
def test_one_slow_node_is_found_in_few_rounds_with_calibrated_floor(n: int) -> None:
    nodes = [f"node{i}" for i in range(1, n + 1)]
    run_pairs, rounds = fake_cluster({"node3"})
    res = run_sweep(nodes, run_pairs, gate_bytes=MIB)
    assert res.localization.bad == {"node3"}
    assert res.floor_gbps == pytest.approx(0.5, abs=0.01)
    assert res.calibration and "best of" in res.calibration
    assert len(rounds) <= 3 < n * (n - 1) // 2
    assert all(len({x for p in r for x in p}) == 2 * len(r) for r in rounds)  # disjoint pairs
    # the floor names node3 (localisation met it with several partners): the peer check spends
    # no re-run on its pairs and names none of them a second time
    assert not any("node3" in p.pair for p in res.peers)


def test_wrong_results_fail_a_pair_even_when_fast() -> None:
    run_pairs, _ = fake_cluster(set(), broken={"node2"})
    res = run_sweep([f"node{i}" for i in range(1, 7)], run_pairs, gate_bytes=MIB, floor_gbps=0.5)
    assert res.localization.bad == {"node2"}


def test_healthy_cluster_has_no_suspects() -> None:
    run_pairs, rounds = fake_cluster(set())
    res = run_sweep([f"n{i}" for i in range(8)], run_pairs, gate_bytes=MIB)
    assert not res.localization.suspects and not res.peers and len(rounds) == 1


def test_drain_reason_carries_prefix_and_figures() -> None:
    run_pairs, _ = fake_cluster({"node3"})
    res = run_sweep([f"node{i}" for i in range(1, 5)], run_pairs, gate_bytes=MIB)
    reasons = reasons_for(res.localization.suspects, "gpucl:", res.floor_gbps)
    assert list(reasons) == ["node3"]
    assert reasons["node3"].startswith("gpucl-nccl: busbw 0.1 GB/s < 0.5 with ")
    # the health check resumes only reasons starting with its own "gpucl:": never this one
    assert not reasons["node3"].startswith("gpucl:")
    (cmd,) = slurm_drain_commands(reasons)
    assert "|| scontrol update nodename=node3 state=drain reason='gpucl-nccl:" in cmd
    (as_admin,) = slurm_drain_commands(reasons, "azureuser")  # not root: through sudo
    assert "|| sudo -n scontrol update nodename=node3 state=drain" in as_admin


@pytest.mark.parametrize(
    ("state", "drains"), [("idle", True), ("drained", False), ("mixed+drain", False)]
)
def test_drain_command_leaves_a_drained_node_alone(tmp_path, state: str, drains: bool) -> None:
    import os
    import subprocess

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "sinfo").write_text(f"#!/bin/sh\necho {state}\n")
    (bin_ / "scontrol").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\n')
    for tool in ("sinfo", "scontrol"):
        (bin_ / tool).chmod(0o755)
    (cmd,) = slurm_drain_commands({"node3": "gpucl-nccl: busbw 0.1 GB/s < 0.5"})
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", cmd], env=env, check=True)
    calls = (tmp_path / "calls").read_text() if (tmp_path / "calls").exists() else ""
    assert ("state=drain" in calls) is drains
