"""Find the bad nodes of a cluster with few rounds of 2-node all-reduce tests.

A round is a set of disjoint node pairs measured in parallel. A pair fails when either node is
bad, so a passing pair clears both nodes and a failing pair says "at least one of these".

Plan:
1. Round 1 pairs the nodes up (an odd node out waits for round 2).
2. Afterwards every unresolved node is paired with a known-good reference it has not met yet,
   one member of each failing pair first when references are scarce, so all failing pairs are
   split in the same round. Nodes left without a reference are paired with each other
   (never re-running a measured pair), which finds new references when many nodes are bad.
3. A node is `bad` once it has failed with `confirmations` distinct trusted partners (its
   round-1 partner counts once that partner has passed elsewhere), so one slow reference cannot
   convict a healthy node on its own.
4. A failing pair whose two nodes both passed elsewhere means one of them is flaky, e.g. a
   reference that degraded after it passed. Both are re-tested against clean references: the one
   that passes is cleared, the one that fails is reported `flaky`.

With k bad nodes among N and 4k <= N - 2 this takes 2 rounds (3 when a bad node sits out round 1
or two bad nodes share a pair), against N(N-1)/2 pairs for testing every pair.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Localization", "PairResult", "Suspect", "localize"]

Pair = tuple[str, str]
MeasureFn = Callable[[list[Pair]], Mapping[Pair, float]]


@dataclass(frozen=True)
class PairResult:
    round: int
    pair: Pair
    busbw_gbps: float
    passed: bool


@dataclass(frozen=True)
class Suspect:
    node: str
    status: Literal["bad", "flaky", "unresolved"]
    reason: str
    figures: tuple[PairResult, ...]


@dataclass(frozen=True)
class Localization:
    suspects: tuple[Suspect, ...]
    good: tuple[str, ...]
    rounds: int
    measurements: tuple[PairResult, ...]

    @property
    def bad(self) -> frozenset[str]:
        return frozenset(s.node for s in self.suspects if s.status == "bad")

    @property
    def flaky(self) -> frozenset[str]:
        return frozenset(s.node for s in self.suspects if s.status == "flaky")

    @property
    def unresolved(self) -> frozenset[str]:
        return frozenset(s.node for s in self.suspects if s.status == "unresolved")

    @property
    def pairs_measured(self) -> int:
        return len(self.measurements)


@dataclass(frozen=True)
class _State:
    trusted: frozenset[str]
    bad: frozenset[str]
    flaky: frozenset[str]
    contested: frozenset[str]  # passed somewhere, failed with a passed partner, not yet re-tested
    evidence: Mapping[str, int]  # distinct trusted partners a never-passing node failed with

    def key(self) -> tuple[object, ...]:
        return (self.trusted, self.bad, self.flaky, self.contested, sorted(self.evidence.items()))


def _assess(nodes: Sequence[str], results: Sequence[PairResult], confirmations: int) -> _State:
    last_pass = _last_passes(results)
    doubted = _doubted(results, last_pass)
    clean = last_pass.keys() - doubted.keys()
    cleared, flaky = _retested(results, doubted, clean)
    trusted = clean | cleared
    evidence = {
        n: _trusted_partners_failed_with(n, results, trusted) for n in nodes if n not in last_pass
    }
    bad = {n for n, k in evidence.items() if k >= confirmations}
    contested = doubted.keys() - cleared - flaky
    return _State(
        frozenset(trusted), frozenset(bad), frozenset(flaky), frozenset(contested), evidence
    )


def _last_passes(results: Sequence[PairResult]) -> dict[str, int]:
    """Each node that passed somewhere: the round of its latest pass."""
    last_pass: dict[str, int] = {}
    for r in results:
        if r.passed:
            for n in r.pair:
                last_pass[n] = max(last_pass.get(n, 0), r.round)
    return last_pass


def _doubted(results: Sequence[PairResult], last_pass: Mapping[str, int]) -> dict[str, int]:
    """A failure between two nodes that both passed somewhere: the node whose latest pass came
    before the failure is doubted (it may have degraded); one that passed again afterwards is
    not. A failure with an already doubted node is blamed on that node alone. Node: the round
    it was first doubted in."""
    doubted: dict[str, int] = {}
    for r in sorted(results, key=lambda r: r.round):
        a, b = r.pair
        if r.passed or a not in last_pass or b not in last_pass:
            continue
        if any(doubted.get(n, r.round) < r.round for n in r.pair):
            continue
        for n in r.pair:
            if last_pass[n] < r.round:
                doubted.setdefault(n, r.round)
    return doubted


def _retested(
    results: Sequence[PairResult], doubted: Mapping[str, int], clean: set[str]
) -> tuple[set[str], set[str]]:
    """The doubted nodes re-tested since against a clean partner: (cleared, flaky) by the
    latest such test."""
    cleared: set[str] = set()
    flaky: set[str] = set()
    for n, since in doubted.items():
        later = [
            r for r in results if n in r.pair and r.round > since and _other(r.pair, n) in clean
        ]
        if later:
            (cleared if later[-1].passed else flaky).add(n)
    return cleared, flaky


def _trusted_partners_failed_with(
    node: str, results: Sequence[PairResult], trusted: set[str]
) -> int:
    partners = {_other(r.pair, node) for r in results if node in r.pair and not r.passed}
    return len(partners & trusted)


def _other(pair: Pair, node: str) -> str:
    return pair[1] if pair[0] == node else pair[0]


def _plan_round(
    nodes: Sequence[str],
    results: Sequence[PairResult],
    state: _State,
    fabric: Callable[[str], str] = lambda _: "",
) -> list[Pair]:
    order = {n: i for i, n in enumerate(nodes)}
    met = {frozenset(r.pair) for r in results}
    failed_with: dict[str, set[str]] = {n: set() for n in nodes}
    for r in results:
        if not r.passed:
            a, b = r.pair
            failed_with[a].add(b)
            failed_with[b].add(a)

    resolved = state.trusted | state.bad | state.flaky
    open_nodes = [n for n in nodes if n not in resolved]
    # Contested nodes first (they block references), then one member of each failing pair.
    open_nodes.sort(key=lambda n: (n not in state.contested, order[n]))
    first: list[str] = []
    rest: list[str] = []
    for n in open_nodes:
        (rest if failed_with[n] & set(first) else first).append(n)

    refs = sorted(state.trusted, key=order.__getitem__)
    busy: set[str] = set()
    pairs: list[Pair] = []
    for n in first + rest:
        ref = next(
            (
                g
                for g in refs
                if g not in busy and frozenset((n, g)) not in met and fabric(g) == fabric(n)
            ),
            None,
        )
        if ref is not None:
            pairs.append((n, ref))
            busy.update((n, ref))

    left = [n for n in open_nodes if n not in busy]
    left.sort(key=order.__getitem__)
    for i, n in enumerate(left):
        if n in busy:
            continue
        mate = next(
            (
                m
                for m in left[i + 1 :]
                if m not in busy and frozenset((n, m)) not in met and fabric(m) == fabric(n)
            ),
            None,
        )
        if mate is not None:
            pairs.append((n, mate))
            busy.update((n, mate))
    return pairs


def localize(
    nodes: Sequence[str],
    measure: MeasureFn,
    passes: Callable[[float], bool],
    *,
    confirmations: int = 2,
    max_rounds: int = 12,
    max_stalled_rounds: int = 2,
    fabric: Callable[[str], str] = lambda _: "",
) -> Localization:
    """Localise bad nodes; `measure` runs one round of disjoint pairs and returns busbw per pair.
    `fabric` names each node's fabric (a scale set: one InfiniBand fabric); a pair is only ever
    made of two nodes of one fabric (between two, RDMA does not run at all)."""
    if len(set(nodes)) != len(nodes):
        raise ValueError("node names must be unique")
    if confirmations < 1:
        raise ValueError("confirmations must be >= 1")
    nodes = list(nodes)
    results: list[PairResult] = []
    state = _assess(nodes, results, confirmations)
    rounds = stalled = 0
    while rounds < max_rounds:
        pairs = (
            _plan_round(nodes, results, state, fabric) if rounds else _first_round(nodes, fabric)
        )
        if not pairs:
            break
        rounds += 1
        figures = {frozenset(p): v for p, v in measure(list(pairs)).items()}
        for pair in pairs:
            if frozenset(pair) not in figures:
                raise ValueError(f"measure() returned no figure for pair {pair}")
            value = float(figures[frozenset(pair)])
            results.append(PairResult(rounds, pair, value, bool(passes(value))))
        new_state = _assess(nodes, results, confirmations)
        stalled = stalled + 1 if new_state.key() == state.key() and rounds > 1 else 0
        state = new_state
        if stalled >= max_stalled_rounds:
            break
    return _report(nodes, results, state, rounds)


def _first_round(nodes: Sequence[str], fabric: Callable[[str], str]) -> list[Pair]:
    groups: dict[str, list[str]] = {}
    for n in nodes:
        groups.setdefault(fabric(n), []).append(n)
    return [(g[i], g[i + 1]) for g in groups.values() for i in range(0, len(g) - 1, 2)]


def _report(
    nodes: Sequence[str], results: Sequence[PairResult], state: _State, rounds: int
) -> Localization:
    suspects: list[Suspect] = []
    for n in nodes:
        if n in state.trusted:
            continue
        figures = tuple(r for r in results if n in r.pair)
        status: Literal["bad", "flaky", "unresolved"]
        if n in state.bad:
            status, reason = "bad", f"failed with {state.evidence[n]} known-good partners"
        elif n in state.flaky:
            status, reason = "flaky", "passed once, then failed with a known-good partner"
        elif not figures:
            status, reason = "unresolved", "never measured"
        elif n in state.contested:
            status, reason = "unresolved", "failed with a partner that passed elsewhere"
        else:
            status, reason = "unresolved", "never passed; not enough known-good partners"
        suspects.append(Suspect(n, status, reason, figures))
    good = tuple(n for n in nodes if n in state.trusted)
    return Localization(tuple(suspects), good, rounds, tuple(results))
