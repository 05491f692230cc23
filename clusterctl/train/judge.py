"""A training run judged: throughput per GPU against a floor, step time, stragglers, scaling.
Pure: runs in, a verdict out.

- throughput: tokens per second per GPU = tokens per step / the run's median step time (steps
  are synchronised by the gradient all-reduce, so a step takes as long as its slowest rank);
- straggler: a rank whose median forward pass (no communication in it) is STRAGGLER_RATIO or more
  times the median rank's; its node is named;
- scaling (weak): per-GPU throughput on N nodes over per-GPU throughput on 1 node, same per-GPU
  batch; judged against a floor when one applies.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Literal

from clusterctl.constants import EXIT_FAIL, EXIT_INCONCLUSIVE
from clusterctl.train.model import Failure, TrainRun

STRAGGLER_RATIO = 1.5
"""A rank is a straggler when its median forward pass takes 1.5x the median rank's or more.
Healthy ranks of one job agree within a few per cent on GPUs (same kernels, same shapes); a
throttled or degraded GPU is well past this; the sandbox's CPU ranks scatter up to ~1.2x."""
FLOOR_SHARE = 0.8
"""With no floor given, the floor is this share of the first accepted run's throughput."""
SCALING_FLOOR = 0.8
"""Weak-scaling efficiency below this fails on the cloud (our choice, stated in the output: no
published figure exists for this model)."""

Status = Literal["pass", "fail", "inconclusive"]


@dataclass(frozen=True)
class Metrics:
    nodes: int
    gpus: int
    tokens_per_s_per_gpu: float
    step_median_s: float
    step_p99_s: float


@dataclass(frozen=True)
class Straggler:
    node: str
    rank: int
    local_rank: int
    forward_s: float
    median_forward_s: float

    @property
    def ratio(self) -> float:
        return self.forward_s / self.median_forward_s

    def line(self) -> str:
        return (
            f"{self.node}: rank {self.rank} (GPU {self.local_rank}) drags the steps: forward pass "
            f"{self.forward_s * 1000:.1f} ms, {self.ratio:.1f}x the median rank's "
            f"{self.median_forward_s * 1000:.1f} ms (limit {STRAGGLER_RATIO}x)"
        )


@dataclass(frozen=True)
class Floor:
    tokens_per_s_per_gpu: float | None
    source: str


@dataclass(frozen=True)
class TrainVerdict:
    status: Status
    reasons: tuple[str, ...]
    metrics: Metrics | None
    single: Metrics | None
    scaling: float | None
    scaling_floor: float | None
    scaling_note: str
    floor: Floor
    stragglers: tuple[Straggler, ...] = ()
    failures: tuple[Failure, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": EXIT_FAIL}.get(self.status, EXIT_INCONCLUSIVE)

    @property
    def bad_nodes(self) -> tuple[str, ...]:
        named = [s.node for s in self.stragglers] + [f.node for f in self.failures if f.node]
        return tuple(dict.fromkeys(named))


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (p99 of 30 steps is the slowest step)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def metrics(run: TrainRun) -> Metrics | None:
    if not run.ranks:
        return None
    n = min(len(r.step_s) for r in run.ranks)
    if n == 0:
        return None
    # a step lasts as long as its slowest rank
    steps = [max(r.step_s[i] for r in run.ranks) for i in range(n)]
    median = statistics.median(steps)
    tokens = statistics.median(r.tokens_per_step for r in run.ranks)
    return Metrics(
        nodes=len({r.node for r in run.ranks}),
        gpus=len(run.ranks),
        tokens_per_s_per_gpu=tokens / median,
        step_median_s=median,
        step_p99_s=percentile(steps, 99),
    )


def stragglers(run: TrainRun, ratio: float = STRAGGLER_RATIO) -> tuple[Straggler, ...]:
    """Ranks whose median forward pass is `ratio` times the median rank's (median_low: with two
    ranks, the faster one is the reference, so a slow one of two is still found)."""
    if len(run.ranks) < 2:
        return ()
    own = {r.rank: statistics.median(r.forward_s) for r in run.ranks if r.forward_s}
    if len(own) < 2:
        return ()
    ref = statistics.median_low(own.values())
    found = [
        Straggler(r.node, r.rank, r.local_rank, own[r.rank], ref)
        for r in run.ranks
        if r.rank in own and ref > 0 and own[r.rank] >= ratio * ref
    ]
    return tuple(sorted(found, key=lambda s: -s.ratio))


def judge(
    run: TrainRun,
    floor: Floor,
    *,
    single: TrainRun | None = None,
    scaling_floor: float | None = SCALING_FLOOR,
    scaling_note: str = "",
) -> TrainVerdict:
    """`run` on all the nodes; `single` the same job on one node (weak scaling's reference)."""
    failures = run.failures
    m = metrics(run)
    s = metrics(single) if single is not None else None
    reasons: list[str] = []
    notes: list[str] = []
    if failures:
        reasons += [f.line() for f in failures]
    slow = stragglers(run) if not failures else ()
    reasons += [x.line() for x in slow]
    scaling = None
    if m and s and s.tokens_per_s_per_gpu > 0:
        scaling = m.tokens_per_s_per_gpu / s.tokens_per_s_per_gpu
        if scaling_floor is not None and scaling < scaling_floor and m.nodes > 1:
            reasons.append(
                f"scaling efficiency {scaling:.0%} from 1 to {m.nodes} nodes is below "
                f"{scaling_floor:.0%}"
            )
    if m and floor.tokens_per_s_per_gpu is not None and not failures:
        if m.tokens_per_s_per_gpu < floor.tokens_per_s_per_gpu:
            reasons.append(
                f"{m.tokens_per_s_per_gpu:,.0f} tokens/s per GPU is below the floor of "
                f"{floor.tokens_per_s_per_gpu:,.0f} ({floor.source})"
            )
    elif m and floor.tokens_per_s_per_gpu is None:
        notes.append(f"throughput not judged: {floor.source}")
    if scaling_note:
        notes.append(scaling_note)
    if any(f.kind in ("oom", "no-output") for f in failures):
        status: Status = "inconclusive"
    elif reasons:
        status = "fail"
    elif m is None:
        status = "inconclusive"
        reasons.append("no rank reported a step")
    else:
        status = "pass"
    return TrainVerdict(
        status=status, reasons=tuple(reasons), metrics=m, single=s, scaling=scaling,
        scaling_floor=scaling_floor, scaling_note=scaling_note, floor=floor,
        stragglers=slow, failures=failures, notes=tuple(notes),
    )  # fmt: skip
