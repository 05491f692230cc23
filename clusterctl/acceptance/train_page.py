"""The training check's report (`validate --train --report PATH.html`): one self-contained page,
as the NCCL report (no scripts, nothing fetched, styles inline). Pure: an outcome in, text out.

Top to bottom: the verdict and why, throughput and step time on one node and on all, every
rank's forward pass against the median rank's (a straggler highlighted), then what ran where.
"""

from __future__ import annotations

import statistics
from html import escape
from typing import TYPE_CHECKING

from clusterctl.acceptance.page import CSS
from clusterctl.train.judge import STRAGGLER_RATIO, Metrics

if TYPE_CHECKING:
    from clusterctl.validate.train import TrainOutcome

_TITLE = {"pass": "PASS", "fail": "FAIL", "inconclusive": "NOT JUDGED"}


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _metrics_row(name: str, m: Metrics | None) -> str:
    if m is None:
        return ""
    cells = (name, m.nodes, m.gpus, f"{m.tokens_per_s_per_gpu:,.0f}",
             f"{m.step_median_s * 1000:.1f}", f"{m.step_p99_s * 1000:.1f}")  # fmt: skip
    return (
        "<tr>"
        + "".join(f"<td{'' if i == 0 else ' class=n'}>{_e(c)}</td>" for i, c in enumerate(cells))
        + "</tr>"
    )


def _ranks(outcome: TrainOutcome) -> str:
    run = outcome.runs[-1] if outcome.runs else None
    if run is None or not run.ranks:
        return ""
    own = {r.rank: statistics.median(r.forward_s) for r in run.ranks if r.forward_s}
    if not own:
        return ""
    ref = statistics.median_low(own.values())
    slow = {s.rank for s in outcome.verdict.stragglers}
    rows = "".join(
        f"<tr{' class=suspect' if r.rank in slow else ''}><td>{_e(r.node)}</td>"
        f"<td class=n>{r.rank}</td><td class=n>{r.local_rank}</td>"
        f"<td class=n>{own[r.rank] * 1000:.1f}</td><td class=n>{own[r.rank] / ref:.2f}x</td></tr>"
        for r in run.ranks
        if r.rank in own
    )
    return (
        "<section><h2>Ranks: forward pass (no communication in it)</h2>"
        f"<p class=muted>A rank at {STRAGGLER_RATIO}x the median rank's or more drags every "
        "step: its node is named.</p><table id=ranks><tr><th>node</th><th>rank</th>"
        f"<th>GPU</th><th>median ms</th><th>vs median rank</th></tr>{rows}</table></section>"
    )


def html(outcome: TrainOutcome, *, generated_at: str, invocation: str) -> str:
    v = outcome.verdict
    status = v.status
    title = f"Training acceptance: {_TITLE.get(status, status)} — {outcome.target}"
    why = "".join(f'<li class="fail">{_e(r)}</li>' for r in v.reasons) + "".join(
        f'<li class="info">{_e(n)}</li>' for n in v.notes
    )
    scaling = "-" if v.scaling is None else f"{v.scaling:.0%}"
    if v.scaling is not None and v.scaling_floor is not None:
        scaling += f" (floor {v.scaling_floor:.0%})"
    floor = "-" if v.floor.tokens_per_s_per_gpu is None else f"{v.floor.tokens_per_s_per_gpu:,.0f}"
    facts = [
        ("target", outcome.target), ("VM size", outcome.sku or "-"),
        ("model", outcome.preset), ("command", outcome.command),
        ("throughput floor", f"{floor} ({v.floor.source})"), ("scaling (weak)", scaling),
        ("invocation", invocation), ("generated", generated_at),
    ]  # fmt: skip
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f'<header id="verdict" class="verdict {status}" data-status="{status}">'
        f"<h1>{_e(title)}</h1><div class=muted>exit {v.exit_code}</div>"
        f'<ul class="why">{why}</ul></header>'
        "<section><h2>Throughput and step time</h2><table id=metrics><tr><th>run</th>"
        "<th>nodes</th><th>ranks</th><th>tokens/s per GPU</th><th>step median ms</th>"
        "<th>step p99 ms</th></tr>"
        + _metrics_row("1 node (reference)", v.single)
        + _metrics_row("all nodes", v.metrics)
        + "</table></section>"
        + _ranks(outcome)
        + "<section><h2>What ran</h2><dl>"
        + "".join(f"<dt>{_e(k)}</dt><dd><code>{_e(val)}</code></dd>" for k, val in facts)
        + "</dl></section></body></html>\n"
    )
