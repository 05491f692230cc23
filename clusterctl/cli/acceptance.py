"""`validate --report PATH`, the validation history, and `validate history -s STACK`.

Every run with `-s STACK` (or `--record STACK`) is kept in the history file
(clusterctl.validate.history); `--report` writes the acceptance report (clusterctl.acceptance),
which shows the run against the stack's first accepted one.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from clusterctl.cli.common import StackOpt, bail, err, out
from clusterctl.cli.paths import writable_file
from clusterctl.errors import UserError, path_problem

if TYPE_CHECKING:
    from clusterctl.validate.history import History
    from clusterctl.validate.run import Outcome

REPORT_SUFFIXES = {".html": "html", ".htm": "html", ".png": "png", ".svg": "svg"}

ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report",
        metavar="PATH",
        help="Write the acceptance report: PATH.html (one self-contained page: verdict, plots, "
        "pairs, history, versions) or PATH.png / PATH.svg (the plots, for a ticket).",
    ),
]
RecordOpt = Annotated[
    str | None,
    typer.Option(
        "--record",
        metavar="STACK",
        help="Keep this run in STACK's validation history (runs with -s are kept anyway); "
        "e.g. a --from-log run.",
    ),
]


def check_report_path(path: Path | None) -> None:
    """Before the run: a report path that cannot be written must not cost the verdict."""
    if path is None:
        return
    if path.suffix.lower() not in REPORT_SUFFIXES:
        raise UserError(
            f"--report {path}: say which kind by its suffix: .html (the page), .png or .svg "
            "(the plots)"
        )
    writable_file(path, "--report")


def history_stack(stack: str | None, record: str | None, sku: str | None = None) -> str | None:
    """The stack a run is kept under. A `--record STACK` run (e.g. a --from-log one) must be of
    a stack that exists and of a VM size it runs, or its history would compare unlike runs."""
    if record is not None and stack is not None and record != stack:
        raise UserError(f"--record {record} with -s {stack}: the run is kept under -s's stack")
    if record is not None and stack is None:
        from clusterctl.spec.load import load_stack_spec

        spec, _ = load_stack_spec(record)  # a stack that does not exist: one line, exit 2
        skus = sorted({p.sku for p in spec.partitions})
        if sku is not None and sku not in skus:
            raise UserError(
                f"--record {record}: the stack runs {', '.join(skus)}, not --sku {sku}: keep "
                "the run under a stack of that size, or leave out --record"
            )
    kept_as = record or stack
    if kept_as is not None:  # before the run: a history that cannot be written must not turn
        writable_file(open_history().path, "the validation history")  # a shown pass into exit 2
    return kept_as


def open_history() -> History:
    from clusterctl.validate.history import project_history

    return project_history()


def _source(from_log: Path | None) -> str:
    if from_log is None:
        return "run"
    return "log stdin" if str(from_log) == "-" else f"log {from_log}"


def keep_and_report(
    outcome: Outcome,
    *,
    stack: str | None,
    report: Path | None,
    target: str,
    from_log: Path | None,
    quiet: bool,
) -> None:
    """Record the run in its stack's history, then write the report (exit 2 if either fails,
    after the verdict has been shown)."""
    from clusterctl.validate.history import HistoryRun, outcome_kind

    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    first: HistoryRun | None = None
    history_path: str | None = None
    try:
        if stack is not None:
            history = open_history()
            history_path = str(history.path)
            first = history.first_accepted(stack, outcome_kind(outcome))
            kept = history.record_outcome(stack, outcome, at=now, source=_source(from_log))
            if not quiet:
                err.print(
                    f"[dim]kept as run #{kept.id} of stack {escape(stack)} in "
                    f"{escape(history_path)}[/]",
                    highlight=False,
                    soft_wrap=True,
                )
    except UserError as exc:
        bail(*exc.problems)
    if report is None:
        return
    import shlex

    from clusterctl.acceptance.page import Context, html, picture

    ctx = Context(
        generated_at=now,
        target=target,
        invocation=shlex.join(["clusterctl", *sys.argv[1:]]),
        stack=stack,
        first_accepted=first,
        history_path=history_path,
    )
    kind = REPORT_SUFFIXES[report.suffix.lower()]
    try:
        report.parent.mkdir(parents=True, exist_ok=True)
        if kind == "html":
            report.write_text(html(outcome, ctx), encoding="utf-8")
        else:
            report.write_bytes(picture(outcome, ctx, kind))
    except OSError as exc:
        bail(path_problem(exc, "--report"))
    if not quiet:
        err.print(f"[dim]report: {escape(str(report))}[/]", highlight=False, soft_wrap=True)


def register_history(group: typer.Typer) -> None:
    @group.command("history")
    def history(
        stack: StackOpt,
        as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
    ) -> None:
        """The stack's validation runs, oldest first: busbw against the floor and against the
        first accepted run of the same SKU and node count."""
        try:
            store = open_history()
            runs = store.runs(stack)
            trains = store.train_runs(stack)
            if not runs and not trains:  # a misspelt stack is an error, not an empty history
                from clusterctl.spec.stackfile import read_stack_config

                read_stack_config(stack)
        except UserError as exc:
            bail(*exc.problems)
        if as_json:
            doc = {"stack": stack, "file": str(store.path), "runs": [_row(r) for r in runs],
                   "train_runs": [asdict(r) for r in trains]}  # fmt: skip
            from clusterctl.figures import tidy_floats

            sys.stdout.write(json.dumps(tidy_floats(doc), indent=2) + "\n")
            return
        if not runs and not trains:
            out.print(f"no validation runs kept for stack {escape(stack)} ({store.path})")
            return
        if runs:
            out.print(_trend(stack, runs, store.path))
            for line in _peer_lines(runs):
                out.print(line, highlight=False)
            for line in _default_algorithm_lines(runs):
                out.print(line, highlight=False, soft_wrap=True)
        if trains:
            out.print(_train_trend(stack, trains, store.path))


def _train_trend(stack: str, runs: list, path: Path) -> Table:
    """`validate --train` runs: throughput per GPU against its floor, scaling."""
    table = Table(title=f"training runs of {stack}", caption=str(path))
    for col in ("#", "when (UTC)", "status", "model", "nodes", "GPUs", "tokens/s per GPU",
                "floor", "scaling"):  # fmt: skip
        table.add_column(
            col, justify="left" if col in ("when (UTC)", "status", "model") else "right"
        )
    style = {"pass": "green", "fail": "bold red"}
    for r in runs:
        status = f"[{style.get(r.status, 'magenta')}]{r.status}[/]"
        table.add_row(
            str(r.id), r.at.replace("T", " ")[:16], status, r.preset,
            str(r.nodes or "-"), str(r.gpus or "-"),
            "-" if r.tokens_per_s_per_gpu is None else f"{r.tokens_per_s_per_gpu:,.0f}",
            "-" if r.floor is None else f"{r.floor:,.0f}",
            "-" if r.scaling is None else f"{r.scaling:.0%}",
        )  # fmt: skip
    return table


def _row(run) -> dict:
    return {
        "id": run.id,
        "at": run.at,
        "status": run.status,
        "source": run.source,
        "sku": run.sku,
        "nodes": run.nodes,
        "busbw_gbps": run.busbw_gbps,
        "floor_gbps": run.floor_gbps,
        "margin_pct": run.margin_pct,
        "network": run.network,
        "fabric": run.fabric,
        "expected_gbps": run.expected_gbps,
        "reasons": run.reasons,
        "nccl_version": run.nccl_version,
        "peer_suspects": _peer_suspects(run),
        "default_algorithm": run.result.get("default_algorithm"),
    }


def _default_algorithm_lines(runs: list) -> list[str]:
    """Under the trend: each kept run's second all-node run, NCCL's default algorithm."""
    return [
        f"#{r.id} {escape(d.get('summary') or str(d.get('status')))}"
        for r in runs
        if (d := r.result.get("default_algorithm"))
    ]


def _peer_suspects(run) -> list[dict]:
    """The suspect pairs of a kept run's peer check, as `--json` showed them when it ran."""
    return list((run.result.get("sweep") or {}).get("peer_suspects") or [])


def _peer_lines(runs: list) -> list[str]:
    """Under the trend: each kept run's suspect pairs, first figure and re-run."""
    from clusterctl.validate.peers import peer_line, verdict_of

    style = {"named": "bold red", "recovered": "green"}
    return [
        f"#{r.id} peer check: [{style.get(verdict_of(d), 'yellow')}]{escape(peer_line(d))}[/]"
        for r in runs
        for d in _peer_suspects(r)
    ]


def _trend(stack: str, runs: list, path: Path) -> Table:
    """One row per run; "vs first accepted" compares a run only with the first accepted run of
    its kind (same SKU, same node count: HistoryRun.kind), never across kinds."""
    from clusterctl.validate.history import first_accepted_of

    table = Table(title=f"validation history of {stack}", caption=str(path))
    for col in ("#", "when (UTC)", "status", "SKU", "nodes", "busbw GB/s", "floor", "margin",
                "vs first accepted", "network", "fabric per host", "source"):  # fmt: skip
        table.add_column(
            col, justify="right" if col in ("#", "nodes", "busbw GB/s", "floor") else "left"
        )
    style = {"pass": "green", "warn": "yellow", "fail": "bold red"}
    for r in runs:
        first = first_accepted_of(runs, r.kind)
        if first is None or r.busbw_gbps is None or first.busbw_gbps is None:
            versus = "-" if first is not None or r.busbw_gbps is None else "none of its kind"
        elif r.id == first.id:
            versus = "first accepted"
        else:
            versus = f"{(r.busbw_gbps - first.busbw_gbps) / first.busbw_gbps * 100:+.1f}%"
        table.add_row(
            str(r.id),
            r.at.replace("T", " ")[:16],
            f"[{style.get(r.status, 'magenta')}]{r.status}[/]",
            escape(r.sku or "-"),
            "-" if r.nodes is None else str(r.nodes),
            "-" if r.busbw_gbps is None else f"{r.busbw_gbps:.2f}",
            "-" if r.floor_gbps is None else f"{r.floor_gbps:g}",
            "-" if r.margin_pct is None else f"{r.margin_pct:+.1f}%",
            versus,
            escape(r.network or "-"),
            escape(r.fabric or "-"),
            escape(r.source if r.source == "run" else "log " + Path(r.source[4:]).name),
        )
    return table
