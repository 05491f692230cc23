"""Bad-node localisation: 2-node all-reduce on disjoint pairs in parallel, wired to
clusterctl.nccl.localize, plus the peer check: a pair below a share of the other pairs' median is
run once more through the same launcher, and named only when the re-run agrees."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from clusterctl.nccl.judge import PEER_FLOOR, SuspectPair, judge_peers
from clusterctl.nccl.localize import Localization, localize
from clusterctl.nccl.parse import NcclParseError, NcclRow, NcclRun, parse_all_reduce
from clusterctl.validate import CouldNotRun

Pair = tuple[str, str]
RunPairs = Callable[[list[Pair]], list[str]]  # outputs, one per pair, in order


def pair_figure(run: NcclRun, gate_bytes: int) -> float:
    """The busbw a pair is judged on: the worst size >= gate_bytes, else its largest size.

    Wrong results count as no bandwidth at all: such a pair must fail.
    """
    if any(r.out_of_place.wrong or r.in_place.wrong for r in run.rows) or run.oob_failed:
        return 0.0
    rows = [r for r in run.rows if r.size_bytes >= gate_bytes] or [run.rows[-1]]
    return min(_busbw(r, run.n_ranks or 2) for r in rows)


def _busbw(row: NcclRow, n_ranks: int) -> float:
    # From the time column, not the printed busbw: at the sandbox probe's ~0.05 GB/s the
    # printed two decimals would hide a 5x slowdown, the time keeps 4+ significant digits.
    factor = 2 * (n_ranks - 1) / n_ranks
    slowest = max(row.out_of_place.time_us, row.in_place.time_us)
    return row.size_bytes / (slowest * 1e3) * factor if slowest > 0 else row.busbw_min_gbps


def output_figure(text: str, gate_bytes: int) -> float:
    """A pair whose job produced no parsable result fails (0.0) rather than stopping the sweep."""
    try:
        return pair_figure(parse_all_reduce(text), gate_bytes)
    except NcclParseError:
        return 0.0


@dataclass
class SweepResult:
    localization: Localization
    peers: list[SuspectPair]
    floor_gbps: float
    calibration: str | None = None
    peer_floor: float = PEER_FLOOR
    """A pair below this share of the other pairs' median is re-run, and named if it stays there."""


def run_sweep(
    nodes: Sequence[str],
    run_pairs: RunPairs,
    *,
    gate_bytes: int,
    floor_gbps: float | None = None,
    calibrate_ratio: float = 0.5,
    rel_floor: float = PEER_FLOOR,
    say: Callable[[str], None] = lambda _: None,
    fabric: Callable[[str], str] = lambda _: "",
) -> SweepResult:
    """Localise bad nodes among `nodes`, then compare the pairs with each other; every pair is
    of two nodes of one `fabric` (localize).

    With `floor_gbps` None the floor is calibrated from the first round: `calibrate_ratio` x the
    best pair (on a homogeneous fabric the best pair shows what a healthy link delivers).
    Each pair below `rel_floor` x the other pairs' median is re-run once by `run_pairs`.
    """
    state: dict[str, float] = {}
    figures: dict[Pair, float] = {}
    calibration: list[str] = []

    def measure(pairs: list[Pair]) -> Mapping[Pair, float]:
        outputs = run_pairs(pairs)
        got = {p: output_figure(text, gate_bytes) for p, text in zip(pairs, outputs, strict=True)}
        figures.update(got)
        if "floor" not in state:
            if floor_gbps is not None:
                state["floor"] = floor_gbps
            else:
                best = max(got.values(), default=0.0)
                if best <= 0:
                    raise CouldNotRun(
                        f"calibration: none of {len(got)} node pair(s) measured any bandwidth "
                        "(the jobs' output had no figure at the gate size)"
                    )
                state["floor"] = calibrate_ratio * best
                calibration.append(
                    f"calibrated on this cluster: {calibrate_ratio:g} x the best of "
                    f"{len(got)} pair(s) ({best:.3g} GB/s)"
                )
        return got

    def passes(value: float) -> bool:
        return value > 0 and value >= state["floor"]

    loc = localize(list(nodes), measure, passes, fabric=fabric)
    # A pair with a node the floor already failed is localisation's to name (it has measured
    # that node with other partners): re-running it would only wait on the same node again.
    named = loc.bad | loc.flaky
    suspects = [s for s in judge_peers(figures, rel_floor=rel_floor) if not named & set(s.pair)]
    return SweepResult(
        localization=loc,
        peers=rerun_suspects(suspects, run_pairs, gate_bytes, say=say),
        floor_gbps=state.get("floor", floor_gbps or 0.0),
        calibration=calibration[0] if calibration else None,
        peer_floor=rel_floor,
    )


def rerun_suspects(
    suspects: Sequence[SuspectPair],
    run_pairs: RunPairs,
    gate_bytes: int,
    *,
    say: Callable[[str], None] = lambda _: None,
) -> list[SuspectPair]:
    """Every suspect run once more, the same pair at the same sizes, worst first.

    Pairs that share a node go in separate rounds: a node runs one pair's job at a time, as in
    localisation.
    """
    rounds: list[list[SuspectPair]] = []
    for s in suspects:
        free = next((r for r in rounds if not any(set(s.pair) & set(o.pair) for o in r)), None)
        if free is None:
            rounds.append([s])
        else:
            free.append(s)
    done: list[SuspectPair] = []
    for batch in rounds:
        say(
            "peer check: re-running once before naming: "
            + ", ".join(
                f"{' + '.join(s.pair)} ({s.ratio:.0%} of the others' median)" for s in batch
            )
        )
        outputs = run_pairs([s.pair for s in batch])
        done += [
            replace(s, rerun_gbps=output_figure(text, gate_bytes))
            for s, text in zip(batch, outputs, strict=True)
        ]
    return sorted(done, key=lambda s: s.ratio)
