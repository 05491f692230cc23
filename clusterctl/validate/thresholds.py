"""Which bandwidth floor applies: the catalog baseline, overridden by the stack, overridden by the
command line. Each figure keeps where it came from, so the report can cite it."""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.errors import UserError
from clusterctl.nccl.judge import Thresholds
from clusterctl.spec.catalog import Baseline

GIB = 1 << 30
# With no published warning level but a published expected figure, warn below 97% of it:
# healthy runs scatter a few percent around the expectation (e.g. ND H100 v5 478.87 measured,
# 466-479 across 1-8 GiB in Azure/AI-benchmarking-guide).
EXPECTED_WARN_RATIO = 0.97


@dataclass(frozen=True)
class Overrides:
    fail_below_gbps: float | None = None
    warn_below_gbps: float | None = None
    where: str = ""


Layer = tuple[str, float | None, float | None]
"""(where, fail floor, warning level): one source of levels, later ones winning."""


def _layers(
    baseline: Baseline | None, stack: Overrides | None, cli: Overrides | None
) -> list[Layer]:
    layers: list[Layer] = []
    if baseline is not None:
        warn = baseline.warn_below_gbps
        if warn is None and baseline.expected_gbps and baseline.fail_below_gbps:
            derived = round(baseline.expected_gbps * EXPECTED_WARN_RATIO, 2)
            warn = derived if derived > baseline.fail_below_gbps else None
        layers.append((f"catalog: {baseline.source}", baseline.fail_below_gbps, warn))
    for o in (stack, cli):
        if o is not None and (o.fail_below_gbps is not None or o.warn_below_gbps is not None):
            layers.append((o.where, o.fail_below_gbps, o.warn_below_gbps))
    return layers


def _levels(
    layers: list[Layer],
) -> tuple[float | None, str | None, float | None, str | None]:
    """The fail floor and warning level the layers leave, with where each came from."""
    fail = fail_src = warn = warn_src = None
    for src, f, w in layers:
        if f is not None:
            fail, fail_src = f, src
            # A higher floor from a later layer makes an earlier warning level meaningless.
            if warn is not None and warn < f:
                warn = warn_src = None
        if w is not None:
            warn, warn_src = w, src
    return fail, fail_src, warn, warn_src


def choose(
    baseline: Baseline | None,
    *,
    stack: Overrides | None = None,
    cli: Overrides | None = None,
    what: str = "",
    message_bytes: int | None = None,
) -> Thresholds:
    """Thresholds for one run; UserError when no floor is known or the levels contradict."""
    fail, fail_src, warn, warn_src = _levels(_layers(baseline, stack, cli))
    if fail is None:
        raise UserError(
            f"no NCCL baseline for {what or 'this cluster'}: pass --fail-below GBPS "
            "(or set validation.nccl.failBelowGbps in the stack)"
        )
    if warn is not None and warn < fail:
        raise UserError(
            f"warning level {warn:g} GB/s ({warn_src}) is below the fail floor {fail:g} GB/s "
            f"({fail_src}): the warning level must be >= the floor"
        )
    size = message_bytes or (baseline.message_bytes if baseline else None) or GIB
    source = fail_src if warn_src in (None, fail_src) else f"{fail_src}; warn: {warn_src}"
    published = tuple(sorted((baseline.curve_gbps or {}).items())) if baseline else ()
    expected = baseline.expected_gbps if baseline else None
    return Thresholds(
        fail,
        warn,
        size,
        source or "",
        curve=curve(baseline, size),
        published=published,
        expected_gbps=expected,
        expected_basis=baseline.expected_basis if baseline and expected else "",
    )


def curve(baseline: Baseline | None, size: int) -> tuple[tuple[int, float], ...]:
    """The baseline's published sweep below `size` as shares of its top figure: the floor at a
    smaller message is the floor times that share (a floor from the stack or the command line
    keeps the catalog's shape)."""
    points = sorted((baseline.curve_gbps or {}).items()) if baseline else []
    points = [(at, bw) for at, bw in points if at < size]
    if not points:
        return ()
    top = max(bw for _, bw in points)
    return tuple((at, min(1.0, bw / top)) for at, bw in points)
