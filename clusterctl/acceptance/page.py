"""The acceptance report as one self-contained HTML page: nothing is fetched when it is opened
(styles inline, the plots inline SVG, no scripts), and it prints on A4/Letter as it shows.

Top to bottom: the verdict and why (a failure first), one plot and size table per node group,
the 2-node pairs of a sweep with the suspects highlighted and the drained nodes named, this run
against the stack's first accepted one, then what ran where (hosts, ranks, GPUs, versions, the
network NCCL used, the commands). Pure: an outcome and its context in, text out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from clusterctl.acceptance import plot
from clusterctl.nccl.judge import Verdict
from clusterctl.nccl.model import NcclRun
from clusterctl.nccl.report import expected_lines
from clusterctl.nccl.units import fmt_bytes
from clusterctl.validate.history import HistoryRun
from clusterctl.validate.peers import peer_cells, peer_json, peer_level, peer_line, verdict_of
from clusterctl.validate.run import Outcome
from clusterctl.validate.sweep import SweepResult

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;
 max-width:980px;margin:0 auto;padding:16px}
h1{font-size:24px;margin:0 0 6px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
header.verdict{border-left-width:10px;border-left-style:solid;padding:10px 16px;margin-bottom:12px}
.pass{border-color:#1e8449;background:#eafaf1}.warn{border-color:#d68910;background:#fef5e7}
.fail{border-color:#c0392b;background:#fdedec}.inconclusive{border-color:#7d3c98;background:#f5eef8}
ul.why{margin:6px 0 0;padding-left:20px}li.fail{font-weight:600;color:#922b21;background:none}
li.warn{color:#7e5109;background:none}li.info{color:#444;background:none}
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}td.n{text-align:right}
tr.suspect td{background:#fadbd8;font-weight:600}tr.judged td{background:#f4f6f7}
figure{margin:8px 0;break-inside:avoid}dl{display:grid;grid-template-columns:max-content auto;
 gap:2px 16px}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}code{font-size:12px}
.muted{color:#666}
@media print{body{max-width:none;padding:0;font-size:11px}h2{break-after:avoid}
 section,table{break-inside:avoid}header.verdict{-webkit-print-color-adjust:exact;
 print-color-adjust:exact}}
"""
_TITLE = {
    "pass": "PASS",
    "warn": "PASS with warnings",
    "fail": "FAIL",
    "inconclusive": "NOT JUDGED",
}


@dataclass(frozen=True)
class Context:
    """What the outcome does not know: when, on what, how it was asked, and the stack's past."""

    generated_at: str
    target: str = ""
    invocation: str = ""
    stack: str | None = None
    first_accepted: HistoryRun | None = None
    history_path: str | None = None


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def references(outcome: Outcome, ctx: Context) -> list[plot.Reference | None]:
    """The first accepted run's curve for each group it also measured."""
    first = ctx.first_accepted
    if first is None:
        return [None] * len(outcome.verdicts)
    label = f"first accepted run #{first.id} ({first.at[:10]})"
    refs: list[plot.Reference | None] = []
    for v in outcome.verdicts:
        points = first.group_points(v.group)
        refs.append(plot.Reference(label, points) if points else None)
    return refs


def _why(outcome: Outcome) -> list[tuple[str, str]]:
    """(level, message) under the verdict: failures first, then warnings, then the evidence."""
    items: list[tuple[str, str]] = []
    order = {"fail": 0, "warn": 1, "info": 2}
    for v in outcome.verdicts:
        group = f"{v.group}: " if v.group and len(outcome.verdicts) > 1 else ""
        items += [(f.level, group + f.message) for f in v.findings]
    if (a := outcome.default_algorithm) is not None:
        items += [(f.level, f"{a.group}: {f.message}") for f in a.findings]
        if a.verdict is not None:  # its own verdict line, beside the Ring run's findings
            items.append(("info", f"{a.group}: {a.line()}"))
    if outcome.sweep is not None:
        loc = outcome.sweep.localization
        items += [
            ("fail" if s.status in ("bad", "flaky") else "warn", f"{s.node} {s.status}: {s.reason}")
            for s in loc.suspects
        ]
        items += [
            (peer_level(d), f"pair {peer_line(d)}") for d in map(peer_json, outcome.sweep.peers)
        ]
    if outcome.drained:
        items.append(("fail", f"drained: {', '.join(outcome.drained)}"))
    items += [("info", n) for n in outcome.notes]
    return sorted(items, key=lambda item: order.get(item[0], 3))


def _verdict(outcome: Outcome, ctx: Context) -> str:
    status = outcome.status
    rows = "".join(f'<li class="{lvl}">{_e(msg)}</li>' for lvl, msg in _why(outcome))
    on = f" — {_e(ctx.target)}" if ctx.target else ""
    return (
        f'<header id="verdict" class="verdict {status}" data-status="{status}">'
        f"<h1>NCCL acceptance: {_TITLE.get(status, status)}{on}</h1>"
        f'<div class="muted">exit {outcome.exit_code} · {_e(ctx.generated_at)}</div>'
        f'<ul class="why">{rows}</ul></header>'
    )


def _sizes_table(v: Verdict) -> str:
    head = "<tr><th>size</th><th>busbw out-of-place</th><th>busbw in-place</th><th>floor</th>"
    head += "<th>margin</th></tr>"
    body = []
    first = next((i for i, s in enumerate(v.sizes) if s.gated), len(v.sizes))
    # the whole sweep is in the plot; the table shows the judged sizes and a few before them
    for s in v.sizes[max(0, first - 4) :]:
        floor = f"{s.floor_gbps:.4g}" if s.floor_gbps else "—"
        margin = (
            f"{(s.busbw_gbps - s.floor_gbps) / s.floor_gbps * 100:+.1f}%" if s.floor_gbps else "—"
        )
        body.append(
            f'<tr class="{"judged" if s.gated else ""}"><td>{fmt_bytes(s.size_bytes)}</td>'
            f'<td class="n">{s.out_of_place_busbw_gbps:.2f}</td>'
            f'<td class="n">{s.in_place_busbw_gbps:.2f}</td><td class="n">{floor}</td>'
            f'<td class="n">{margin}</td></tr>'
        )
    return f'<table class="sizes">{head}{"".join(body)}</table>'


def _groups(outcome: Outcome, ctx: Context) -> str:
    refs = references(outcome, ctx)
    parts = ['<section id="groups"><h2>Bus bandwidth by message size</h2>']
    default = outcome.default_algorithm
    judged = [(default.verdict, None)] if default and default.verdict else []
    for v, ref in [*zip(outcome.verdicts, refs, strict=True), *judged]:
        th = v.thresholds
        svg = plot.inline_svg(plot.figure([v], references=[ref]))
        parts.append(
            f'<figure class="plot" data-group="{_e(v.group)}">{svg}<figcaption class="muted">'
            f"Floor {th.fail_below_gbps:g} GB/s at ≥ {fmt_bytes(th.message_bytes)}"
            + (f", warning below {th.warn_below_gbps:g} GB/s" if th.warn_below_gbps else "")
            + "".join(f"; {_e(line)}" for line in expected_lines(v))
            + f"; {_e(th.source)}. Judged sizes are circled.</figcaption></figure>"
            + _sizes_table(v)
        )
    if default is not None and default.verdict is None:
        parts.append(
            f'<p class="default-algorithm muted">{_e(default.group)}: {_e(default.line())}</p>'
        )
    parts.append("</section>")
    return "".join(parts)


def _pairs(outcome: Outcome) -> str:
    if outcome.sweep is None:
        return ""
    sweep = outcome.sweep
    loc = sweep.localization
    suspects = {s.node: s for s in loc.suspects}
    rows = []
    for m in loc.measurements:
        bad = not m.passed or any(n in suspects for n in m.pair)
        rows.append(
            f'<tr class="{"suspect" if bad else ""}"><td class="n">{m.round}</td>'
            f'<td>{_e(" + ".join(m.pair))}</td><td class="n">{m.busbw_gbps:.3g}</td>'
            f'<td class="n">{sweep.floor_gbps:.3g}</td><td>{"pass" if m.passed else "FAIL"}</td>'
            "</tr>"
        )
    named = "".join(
        f'<tr class="suspect"><td>{_e(s.node)}</td><td>{_e(s.status)}</td><td>{_e(s.reason)}</td>'
        f"<td>{'drained' if s.node in outcome.drained else '—'}</td></tr>"
        for s in loc.suspects
    )
    calibration = f"<p>{_e(sweep.calibration)}</p>" if sweep.calibration else ""
    return (
        '<section id="pairs"><h2>2-node pairs</h2>'
        f"<p>{loc.rounds} round(s), {loc.pairs_measured} pair(s) measured; "
        f"healthy: {_e(', '.join(loc.good) or 'none')}.</p>{calibration}"
        '<table class="pairs"><tr><th>round</th><th>pair</th><th>busbw GB/s</th><th>floor</th>'
        f"<th>result</th></tr>{''.join(rows)}</table>"
        + (
            '<table class="suspects"><tr><th>node</th><th>status</th><th>why</th>'
            f"<th>drain</th></tr>{named}</table>"
            if named
            else ""
        )
        + _peers(sweep)
        + "</section>"
    )


def _peers(sweep: SweepResult) -> str:
    """The peer check: each suspect pair's first figure and its re-run against the same median."""
    head = f"<p>Peer check: a pair below {sweep.peer_floor:g} × the other pairs' median is re-run "
    if not sweep.peers:
        return head + "once before it is named; none was.</p>"
    rows = []
    for d in map(peer_json, sweep.peers):
        *cells, verdict = map(_e, peer_cells(d))
        pair, *figures = cells
        rows.append(
            f'<tr class="{"suspect" if verdict_of(d) == "named" else ""}" '
            f'data-verdict="{verdict_of(d)}"><td>{pair}</td>'
            + "".join(f'<td class="n">{c}</td>' for c in figures)
            + f"<td>{verdict}</td></tr>"
        )
    return (
        head + "once; it is named only when the re-run agrees.</p>"
        '<table class="peers"><tr><th>pair</th><th>busbw GB/s</th><th>re-run GB/s</th>'
        "<th>peers' median</th><th>ratio</th><th>verdict</th></tr>" + "".join(rows) + "</table>"
    )


def _comparison(outcome: Outcome, ctx: Context) -> str:
    if ctx.stack is None:
        return ""
    first = ctx.first_accepted
    where = f" (kept in <code>{_e(ctx.history_path)}</code>)" if ctx.history_path else ""
    if first is None:
        text = (
            f"<p>Stack {_e(ctx.stack)} has no accepted run before this one{where}"
            + ("; this run is its first." if outcome.status in ("pass", "warn") else ".")
            + "</p>"
        )
        return f'<section id="comparison"><h2>Against the first accepted run</h2>{text}</section>'
    then = {g.get("group"): g for g in first.result.get("groups", [])}
    rows = []
    for v in outcome.verdicts:
        old = then.get(v.group, {}).get("measured_busbw_gbps")
        now = v.measured_busbw_gbps
        delta = f"{(now - old) / old * 100:+.1f}%" if old and now is not None else "—"
        rows.append(
            f'<tr><td>{_e(v.group or "-")}</td><td class="n">{_fmt(old)}</td>'
            f'<td class="n">{_fmt(now)}</td><td class="n">{delta}</td></tr>'
        )
    return (
        '<section id="comparison"><h2>Against the first accepted run</h2>'
        f"<p>Run #{first.id} of stack {_e(ctx.stack)}, {_e(first.at)} ({_e(first.status)}, "
        f"{_e(first.source)}){where}; its curve is grey in the plots.</p>"
        "<table><tr><th>group</th><th>then (worst judged busbw)</th><th>now</th>"
        f"<th>change</th></tr>{''.join(rows)}</table></section>"
    )


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _facts(outcome: Outcome, ctx: Context) -> str:
    items: list[tuple[str, str]] = []
    if ctx.target:
        items.append(("target", ctx.target))
    if outcome.sku:
        items.append(("SKU", outcome.sku))
    for v, run in zip(outcome.verdicts, _runs(outcome), strict=True):
        prefix = f"{v.group}: " if len(outcome.verdicts) > 1 else ""
        items += [(prefix + k, val) for k, val in _run_facts(v, run)]
    if outcome.command:
        items.append(("benchmark command", outcome.command))
    if ctx.invocation:
        items.append(("clusterctl command", ctx.invocation))
    rows = "".join(f"<dt>{_e(k)}</dt><dd><code>{_e(v)}</code></dd>" for k, v in items)
    return f'<section id="facts"><h2>What ran where</h2><dl>{rows}</dl></section>'


def _runs(outcome: Outcome) -> Sequence[NcclRun | None]:
    runs: list[NcclRun | None] = list(outcome.runs)
    return runs + [None] * (len(outcome.verdicts) - len(runs))


def _run_facts(v: Verdict, run: NcclRun | None) -> list[tuple[str, str]]:
    facts = [("hosts", ", ".join(v.hosts) or "not named in the output"), ("ranks", str(v.n_ranks))]
    if run is None:
        return facts
    if run.ranks:
        per_host = sorted(set(run.gpus_per_host.values()))
        facts.append(
            ("GPUs", f"{'/'.join(map(str, per_host))} per host: {', '.join(run.gpu_names)}")
        )
    nets = "; ".join(
        n.describe() + (f" on {', '.join(n.hosts)}" if n.hosts else "") for n in run.networks
    )
    facts.append(("network", nets or "not in the output (NCCL_DEBUG=INFO was not set)"))
    facts += [(f"fabric {f.host}", f.describe()) for f in v.fabric]
    if v.expect is not None:
        unit = {"infiniband": "IB devices", "efa": "EFA NICs"}[v.expect.kind]
        gdr = " with GPUDirect RDMA" if v.expect.gdr else ""
        facts.append(("fabric expected", f"{v.expect.devices} {unit} per host{gdr}"))
    for key, value in (
        ("NCCL", run.nccl_version),
        ("nccl-tests", run.tests_version),
        ("CUDA driver API", _driver(run.cuda_driver)),
    ):
        if value:
            facts.append((key, value))
    return facts


def _driver(code: str | None) -> str | None:
    """NCCL prints cudaDriverGetVersion() as 1000 x major + 10 x minor: 12080 is 12.8."""
    if not code or not code.isdigit():
        return code
    n = int(code)
    return f"{n // 1000}.{n % 1000 // 10}"


def html(outcome: Outcome, ctx: Context) -> str:
    """The whole page."""
    title = f"NCCL acceptance: {_TITLE.get(outcome.status, outcome.status)}"
    if ctx.target:
        title += f" — {ctx.target}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        + _verdict(outcome, ctx)
        + _groups(outcome, ctx)
        + _pairs(outcome)
        + _comparison(outcome, ctx)
        + _facts(outcome, ctx)
        + "</body></html>\n"
    )


def picture(outcome: Outcome, ctx: Context, fmt: str) -> bytes:
    """The plots alone as one PNG or SVG, the verdict and its first reason as the title."""
    why = [msg for level, msg in _why(outcome) if level != "info"]
    title = f"{_TITLE.get(outcome.status, outcome.status)}" + (
        f" — {ctx.target}" if ctx.target else ""
    )
    if why:
        title += "\n" + (why[0] if len(why[0]) <= 110 else why[0][:107] + "...")
    fig = plot.figure(outcome.verdicts, references=references(outcome, ctx), title=title)
    return plot.render(fig, fmt)
