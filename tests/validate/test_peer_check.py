"""The peer check: a 2-node pair below 0.9 of the other pairs' median is re-run once, through the
same launcher, and named only when the re-run agrees."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import pytest

from clusterctl.nccl.emit import format_all_reduce, row_from_times
from clusterctl.nccl.judge import SuspectPair
from clusterctl.validate.run import Options, Outcome, outcome_json, validate_slurm
from clusterctl.validate.slurm_launcher import JobResult
from clusterctl.validate.sweep import run_sweep
from clusterctl.validate.targets import Benchmark, SlurmTarget
from clusterctl.validate.transport import SshTarget

GIB = 1 << 30
HEALTHY = 380.0  # GB/s: a Ring all_reduce over 8 x 400 Gb/s NDR (~48 GB/s a NIC)
NODES = [f"n{i}" for i in range(1, 9)]  # round 1 pairs them as (n1, n2) ... (n7, n8)


def pair_output(pair: Sequence[str], gbps: float) -> str:
    """A 2-rank all_reduce at 1 and 2 GiB, both at `gbps` busbw (2 ranks: busbw = algbw)."""
    rows = [row_from_times(size, size / (gbps * 1e3), size / (gbps * 1e3), n_ranks=2)
            for size in (GIB, 2 * GIB)]  # fmt: skip
    return format_all_reduce(rows, hosts=list(pair))


Figure = Callable[[tuple[str, str], int], float]
"""A pair's busbw on its n-th run (0: first)."""


class Fabric:
    """Pair jobs that print `figure(pair, attempt)`; every pair job is counted."""

    def __init__(self, figure: Figure) -> None:
        self.figure = figure
        self.calls: list[list[tuple[str, str]]] = []
        self.runs: Counter[tuple[str, str]] = Counter()

    def run_pairs(self, pairs: list[tuple[str, str]]) -> list[str]:
        self.calls.append(list(pairs))
        out = []
        for p in pairs:
            out.append(pair_output(p, self.figure(p, self.runs[p])))
            self.runs[p] += 1
        return out


def slow(pair_node: str, first: float, again: float) -> Figure:
    """Healthy everywhere but the pair with `pair_node`: `first` x healthy, then `again` x."""

    def figure(pair, attempt):
        if pair_node not in pair:
            return HEALTHY
        return HEALTHY * (first if attempt == 0 else again)

    return figure


def sweep(fabric: Fabric, nodes=NODES, **kw):
    # an absolute floor every pair here clears: what remains is the peer check
    return run_sweep(nodes, fabric.run_pairs, gate_bytes=GIB, floor_gbps=300.0, **kw)


def test_a_pair_at_seven_eighths_is_named_when_its_rerun_agrees() -> None:
    """One rail of eight gone on one node: 0.875 of its peers, twice."""
    fabric = Fabric(slow("n8", 0.875, 0.875))
    res = sweep(fabric)
    assert not res.localization.suspects  # the absolute floor sees nothing
    (p,) = res.peers
    assert p.pair == ("n7", "n8") and p.verdict == "named"
    assert p.ratio == pytest.approx(0.875, rel=1e-3)
    assert p.rerun_gbps == pytest.approx(0.875 * HEALTHY, rel=1e-3)
    assert p.peer_median_gbps == pytest.approx(HEALTHY, rel=1e-3)
    assert Outcome([], res).status == "fail"


def test_a_pair_whose_rerun_recovers_is_shown_and_not_named() -> None:
    fabric = Fabric(slow("n8", 0.875, 0.98))
    res = sweep(fabric)
    (p,) = res.peers
    assert p.verdict == "recovered"
    assert (p.ratio, p.rerun_ratio) == (
        pytest.approx(0.875, rel=1e-3),
        pytest.approx(0.98, rel=1e-3),
    )
    assert Outcome([], res).status == "pass"


@pytest.mark.parametrize("seed", range(5))
def test_a_healthy_fabric_with_a_few_percent_of_noise_names_nothing(seed: int) -> None:
    """Up to +-4 % around the healthy figure (AzNHC's margin, judge.PEER_FLOOR): no suspect, so
    no re-run and no extra job."""
    import random

    rnd = random.Random(seed)
    noise = {
        frozenset(p): rnd.uniform(0.96, 1.04) for p in zip(NODES[::2], NODES[1::2], strict=True)
    }
    fabric = Fabric(lambda pair, _: HEALTHY * noise[frozenset(pair)])
    res = sweep(fabric)
    assert res.peers == [] and res.peer_floor == 0.9
    assert len(fabric.calls) == 1 and set(fabric.runs.values()) == {1}
    assert Outcome([], res).status == "pass"


def test_each_suspect_is_rerun_exactly_once_and_healthy_pairs_never() -> None:
    nodes = [f"n{i}" for i in range(1, 13)]  # 6 pairs, two of them slow

    def figure(pair, attempt):
        return HEALTHY * (0.8 if {"n4", "n12"} & set(pair) else 1.0)

    fabric = Fabric(figure)
    res = sweep(fabric, nodes)
    assert sorted(p.pair for p in res.peers) == [("n11", "n12"), ("n3", "n4")]
    assert all(p.verdict == "named" for p in res.peers)
    assert fabric.runs == Counter({p: 2 if p in {("n3", "n4"), ("n11", "n12")} else 1
                                   for p in zip(nodes[::2], nodes[1::2], strict=True)})  # fmt: skip
    # the two suspects share no node: one round of re-runs, after the sweep's one round
    assert len(fabric.calls) == 2 and sorted(fabric.calls[1]) == [("n11", "n12"), ("n3", "n4")]


def test_suspects_that_share_a_node_are_rerun_in_separate_rounds() -> None:
    from clusterctl.validate.sweep import rerun_suspects

    suspects = [SuspectPair(("a", "b"), 300, 380), SuspectPair(("a", "c"), 310, 380),
                SuspectPair(("d", "e"), 320, 380)]  # fmt: skip
    again = {("a", "b"): 301.0, ("a", "c"): 372.0, ("d", "e"): 330.0}
    calls: list[list[tuple[str, str]]] = []

    def run_pairs(pairs):
        calls.append(list(pairs))
        return [pair_output(p, again[p]) for p in pairs]

    done = rerun_suspects(suspects, run_pairs, GIB)
    assert calls == [[("a", "b"), ("d", "e")], [("a", "c")]]
    assert {p.pair: round(p.rerun_gbps or 0) for p in done} == {
        k: round(v) for k, v in again.items()
    }
    assert {p.pair: p.verdict for p in done} == {
        ("a", "b"): "named", ("a", "c"): "recovered", ("d", "e"): "named"
    }  # fmt: skip


def test_a_rerun_that_prints_nothing_usable_names_the_pair() -> None:
    """A re-run job with no figure at the gate size is no bandwidth, not a recovery."""
    from clusterctl.validate.sweep import rerun_suspects

    done = rerun_suspects([SuspectPair(("a", "b"), 300, 380)], lambda pairs: ["garbage"], GIB)
    assert done[0].rerun_gbps == 0.0 and done[0].verdict == "named"


# --- through validate_slurm: the re-run is a job of the same launcher ---------------------------


class Launcher:
    """A Slurm launcher stand-in: pair jobs print the fabric's figures, the whole run a healthy
    result over every node."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.jobs: list[tuple[str, ...]] = []

    def run_many(self, jobs, *, timeout_s=None):
        self.jobs += [tuple(j.nodelist) for j in jobs]
        outputs = self.fabric.run_pairs([tuple(j.nodelist) for j in jobs])
        return [JobResult(str(i), "COMPLETED", o) for i, o in enumerate(outputs)]

    def run(self, job, *, timeout_s=None):
        self.jobs.append(tuple(job.nodelist))
        rows = [row_from_times(GIB, GIB / (HEALTHY * 1e3) * 7 / 4, GIB / (HEALTHY * 1e3) * 7 / 4,
                               n_ranks=len(job.nodelist))]  # fmt: skip
        return JobResult("100", "COMPLETED", format_all_reduce(rows, hosts=list(job.nodelist)))


def target(peer: float | None = None) -> SlurmTarget:
    own = {} if peer is None else {"peer_floor": peer}
    bench = Benchmark("probe", "1G", "2G", 3, 1, calibrate_ratio=0.5, **own)
    ssh = SshTarget(host="sched")
    return SlurmTarget(ssh, nodes=8, gpus_per_node=1, benchmark=bench, node_names=tuple(NODES))


def test_the_rerun_goes_through_the_same_launcher_and_into_the_json() -> None:
    launcher = Launcher(Fabric(slow("n8", 0.875, 0.875)))
    said: list[str] = []
    outcome = validate_slurm(target(), Options(say=said.append), launcher=launcher)
    assert launcher.jobs.count(("n7", "n8")) == 2  # the sweep's job and its one re-run
    assert any("re-running once before naming: n7 + n8" in s for s in said)
    assert outcome.status == "fail" and outcome.exit_code == 1
    (d,) = outcome_json(outcome)["sweep"]["peer_suspects"]
    assert d["pair"] == ["n7", "n8"] and d["verdict"] == "named" and d["rel_floor"] == 0.9
    assert d["busbw_gbps"] == pytest.approx(332.5, rel=1e-3)
    assert d["rerun_gbps"] == pytest.approx(332.5, rel=1e-3)
    assert d["peer_median_gbps"] == pytest.approx(HEALTHY, rel=1e-3)
    assert d["ratio"] == pytest.approx(0.875, rel=1e-3) == d["rerun_ratio"]


@pytest.mark.parametrize(
    ("bench", "cli", "used"), [(None, None, 0.9), (0.25, None, 0.25), (0.25, 0.8, 0.8)]
)
def test_the_peer_floor_comes_from_the_command_line_then_the_benchmark(bench, cli, used) -> None:
    from clusterctl.validate.run import peer_floor

    assert peer_floor(target(bench), Options(peer_floor=cli)) == used
    launcher = Launcher(Fabric(slow("n8", 0.7, 0.7)))
    outcome = validate_slurm(target(bench), Options(peer_floor=cli), launcher=launcher)
    assert outcome.sweep is not None and outcome.sweep.peer_floor == used
    assert [p.verdict for p in outcome.sweep.peers] == (["named"] if used > 0.7 else [])
