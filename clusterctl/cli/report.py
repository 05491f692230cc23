"""How `clusterctl validate` shows an outcome: rich tables, JSON, JUnit.

The rows come from clusterctl.nccl.report (standard library only); drawing them is the CLI's job.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from clusterctl.cli.common import err, out
from clusterctl.errors import path_problem
from clusterctl.nccl.report import (
    HEADERS,
    algorithm_lines,
    expected_lines,
    fabric_lines,
    table_lines,
    to_junit,
)
from clusterctl.validate.run import outcome_json

if TYPE_CHECKING:
    from clusterctl.nccl.judge import Verdict
    from clusterctl.validate.run import Outcome

_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "inconclusive": "magenta"}


def nccl_table(verdicts: Sequence[Verdict], *, all_sizes: bool = False) -> Table:
    """Busbw per group and message size (gated sizes only unless `all_sizes`), then reasons."""
    table = Table(title="NCCL all_reduce bus bandwidth (GB/s)")
    for h in HEADERS:
        table.add_column(h, justify="left" if h in ("group", "status") else "right")
    for row in table_lines(verdicts, all_sizes=all_sizes):
        status = row[-1]
        table.add_row(*row[:-1], f"[{_STYLE.get(status, '')}]{status}[/]" if status else "")
    return table


def reason_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """Why each group got its status, then its notes (info findings, e.g. "fabric unproven"),
    as lines under the table: a table caption is dim and centred, and cut when piped."""
    lines = []
    for v in verdicts:
        style = _STYLE.get(v.status, "")
        lines += [f"[{style}]{escape(v.group or '-')}: {escape(r)}[/]" for r in v.reasons]
        lines += [
            f"note: {escape(v.group or '-')}: {escape(f.message)}"
            for f in v.findings
            if f.level == "info"
        ]
    return lines


def report(outcome: Outcome, *, as_json: bool, junit: Path | None) -> None:
    """The outcome on stdout (a table, or JSON) and, if asked, as JUnit XML in a file: the
    verdict first, so a file that cannot be written does not cost it (exit 2 then)."""
    if as_json:
        sys.stdout.write(json.dumps(outcome_json(outcome), indent=2) + "\n")
    else:
        _print(outcome)
    if junit is not None:
        try:
            junit.parent.mkdir(parents=True, exist_ok=True)
            from clusterctl.validate.peers import peer_json, with_peer_case

            peers = None if outcome.sweep is None else [peer_json(p) for p in outcome.sweep.peers]
            xml = to_junit(outcome.verdicts, default_algorithm=outcome.default_algorithm)
            junit.write_text(with_peer_case(xml, peers))
        except OSError as exc:
            err.print(f"[red]error:[/] {escape(path_problem(exc, '--junit'))}", highlight=False)
            raise typer.Exit(2) from None


def _print(outcome: Outcome) -> None:
    _print_verdicts(outcome)
    if outcome.sweep is not None:
        _print_sweep(outcome)
    for note in outcome.notes:
        out.print(f"note: {note}")
    if outcome.drained:
        out.print(f"drained: {', '.join(outcome.drained)}")
    colour = {"pass": "green", "warn": "yellow", "fail": "bold red"}.get(outcome.status, "magenta")
    out.print(f"[{colour}]NCCL validation: {outcome.status}[/] (exit {outcome.exit_code})")


def _print_verdicts(outcome: Outcome) -> None:
    """The verdicts' table and what explains each: reasons, expected figures, fabric, the
    default algorithm's run (or why it was not judged)."""
    default = outcome.default_algorithm
    judged = [default.verdict] if default is not None and default.verdict is not None else []
    out.print(nccl_table([*outcome.verdicts, *judged]))
    for line in reason_lines(outcome.verdicts):
        out.print(line, highlight=False, soft_wrap=True)
    for v in outcome.verdicts:
        group = f"{v.group}: " if v.group and len(outcome.verdicts) > 1 else ""
        for line in expected_lines(v) + fabric_lines(v):
            out.print(escape(group + line), highlight=False, soft_wrap=True)
    for line in algorithm_lines(default):
        out.print(escape(line), highlight=False, soft_wrap=True)
    if default is not None and default.verdict is None:
        for f in default.checks:
            out.print(escape(f"{default.group}: {f.message}"), highlight=False, soft_wrap=True)


def _print_sweep(outcome: Outcome) -> None:
    """The 2-node pair sweep: each measured pair, the floor, the suspects, the peer check."""
    assert outcome.sweep is not None
    loc = outcome.sweep.localization
    table = Table(title=f"2-node pairs: {loc.rounds} round(s), {loc.pairs_measured} pairs")
    for col in ("round", "pair", "busbw GB/s", "floor", "result"):
        table.add_column(col)
    for m in loc.measurements:
        table.add_row(
            str(m.round), " + ".join(m.pair), f"{m.busbw_gbps:.3g}",
            f"{outcome.sweep.floor_gbps:.3g}", "pass" if m.passed else "[red]fail[/]",
        )  # fmt: skip
    out.print(table)
    if outcome.sweep.calibration:
        out.print(f"floor: {outcome.sweep.calibration}")
    for s in loc.suspects:
        out.print(f"[bold red]suspect[/] {s.node}: {s.status} ({s.reason})")
    out.print(_peer_table(outcome))


_PEER_STYLE = {"named": "bold red", "recovered": "green", "unconfirmed": "yellow"}


def _peer_table(outcome: Outcome) -> Table | str:
    """Each suspect pair: its first figure, its re-run, the other pairs' median, both ratios and
    the verdict; one line when no pair fell below the peer floor."""
    from clusterctl.validate.peers import peer_cells, peer_json, verdict_of

    assert outcome.sweep is not None
    floor = outcome.sweep.peer_floor
    if not outcome.sweep.peers:
        return f"peer check: every pair at or above {floor:g} x the other pairs' median"
    table = Table(
        title=f"peer check: pairs below {floor:g} x the other pairs' median, re-run once",
    )
    for col in ("pair", "busbw GB/s", "re-run GB/s", "peers' median", "ratio", "verdict"):
        table.add_column(col, justify="left" if col in ("pair", "verdict") else "right")
    for p in outcome.sweep.peers:
        d = peer_json(p)
        *cells, verdict = peer_cells(d)
        table.add_row(*map(escape, cells), f"[{_PEER_STYLE[verdict_of(d)]}]{verdict}[/]")
    return table
