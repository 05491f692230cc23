"""`clusterctl validate --train`: a distributed training run on the cluster, judged; the options
the NCCL check has no use for here are refused, and the run is kept in the stack's history."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from clusterctl.cli.common import bail, err, out
from clusterctl.errors import UserError, path_problem

# Options of `validate` that mean nothing to a training run: refused, never dropped.
NOT_FOR_TRAIN = {
    "nccl": "--nccl and --train are separate checks: run one, then the other",
    "sweep": "--sweep measures NCCL pairs; a training run names a straggler by itself",
    "drain": "--drain acts on an NCCL sweep's findings",
    "resume": "--resume re-tests a node an NCCL sweep drained",
    "min_bytes": "-b/--min-bytes sizes NCCL messages",
    "max_bytes": "-e/--max-bytes sizes NCCL messages",
    "fail_below": "--fail-below is an NCCL busbw floor; use --min-tokens-per-gpu",
    "warn_below": "--warn-below is an NCCL busbw level; use --min-tokens-per-gpu",
    "peer_floor": "--peer-floor compares NCCL pairs; a training run names a straggler by itself",
}


def refuse_for_train(given: Mapping[str, object]) -> None:
    problems = [why for key, why in NOT_FOR_TRAIN.items() if given.get(key) not in (None, False)]
    if problems:
        raise UserError(*problems)


def floor_for(
    min_tokens: float | None, kept_as: str | None, preset: str, sku: str | None
) -> tuple[Any, Any]:
    """The throughput floor and where it comes from: the command line, else 80% of the first
    passing run of the same model on the same VM size kept for this stack. No published figure
    (NVIDIA, MLPerf, Azure) exists for this model, so none is offered as one."""
    from clusterctl.train.judge import FLOOR_SHARE, Floor

    if min_tokens is not None:
        return Floor(min_tokens, "--min-tokens-per-gpu"), None
    if kept_as is None:
        return Floor(None, "no floor: give --min-tokens-per-gpu, or keep runs with -s/--record "
                           "so later runs are held to the first passing one"), None  # fmt: skip
    from clusterctl.cli.acceptance import open_history

    history = open_history()
    first = history.first_accepted_train(kept_as, preset, sku)
    if first is None or first.tokens_per_s_per_gpu is None:
        return Floor(None, f"no floor yet: calibrating. No passing run of this model is kept for "
                           f"{kept_as}; once this one passes, later runs must reach "
                           f"{FLOOR_SHARE:.0%} of it"), history  # fmt: skip
    ref = first.tokens_per_s_per_gpu
    return Floor(
        FLOOR_SHARE * ref,
        f"calibrated: {FLOOR_SHARE:.0%} of run #{first.id} ({first.at[:16].replace('T', ' ')} "
        f"UTC, {ref:,.0f} tokens/s per GPU), the first passing run of this model on "
        f"{sku or 'this cluster'}; no published figure exists for this model",
    ), history


def check_report(report: Path | None) -> None:
    """Before the run: the page only (the NCCL report's plots are bandwidth curves)."""
    if report is not None and report.suffix.lower() != ".html":
        raise UserError(f"--report {report}: a training run's report is a page: name it .html")
    from clusterctl.cli.acceptance import check_report_path

    check_report_path(report)


def write_report(outcome: Any, report: Path, quiet: bool) -> None:
    import shlex
    import sys

    from clusterctl.acceptance.train_page import html

    at = datetime.now(UTC).replace(microsecond=0).isoformat()
    page = html(outcome, generated_at=at, invocation=shlex.join(["clusterctl", *sys.argv[1:]]))
    try:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(page, encoding="utf-8")
    except OSError as exc:
        bail(path_problem(exc, "--report"))
    if not quiet:
        err.print(f"[dim]report: {escape(str(report))}[/]", highlight=False, soft_wrap=True)


def run(
    *, target: Any, min_tokens: float | None, min_scaling: float | None, scaling: bool,
    steps: int | None, as_json: bool, junit: Path | None, kept_as: str | None,
    report: Path | None = None,
) -> int:  # fmt: skip
    from clusterctl.validate.targets import KubeTarget, LogTarget

    say = (lambda _: None) if as_json else (lambda m: err.print(f"[dim]{m}[/]", highlight=False))
    logged = None
    if isinstance(target, LogTarget):
        from clusterctl.train.parse import parse

        logged = parse(target.read())
        cpu = logged.start.get("device") == "cpu"  # the run's own start line says
    else:
        cpu = getattr(getattr(target, "benchmark", None), "program", "") == "probe"
    preset = "cpu" if cpu else "gpu"
    floor, history = floor_for(min_tokens, kept_as, preset, getattr(target, "sku", None))
    if logged is not None:
        outcome = _from_log(target, logged, floor, preset)
    elif isinstance(target, KubeTarget):
        from clusterctl.validate.train_k8s import train_k8s

        err.print(
            f"kubeconfig: {target.kubeconfig} ({target.kubeconfig_source})",
            highlight=False, soft_wrap=True, markup=False,
        )  # fmt: skip

        outcome = train_k8s(target, _options(floor, min_scaling, scaling, steps, say))
    else:
        from clusterctl.spec.catalog import catalog
        from clusterctl.validate.run import profile_env
        from clusterctl.validate.train import train_slurm

        image = ((catalog().versions.get("training") or {}).get("container") or {}).get("image")
        opts = _options(floor, min_scaling, scaling, steps, say, image)
        outcome = train_slurm(target, opts, profile_env(target.sku))
    show(outcome, as_json=as_json, junit=junit)
    if report is not None:
        write_report(outcome, report, as_json)
    if kept_as is not None:
        from clusterctl.train.report import to_json

        v = outcome.verdict
        data = to_json(v, preset=outcome.preset, sku=outcome.sku, target=outcome.target,
                       command=outcome.command)  # fmt: skip
        try:
            if history is None:
                from clusterctl.cli.acceptance import open_history

                history = open_history()
            at = datetime.now(UTC).replace(microsecond=0).isoformat()
            kept = history.record_train(kept_as, data, at=at)
        except UserError as exc:
            bail(*exc.problems)
        if not as_json:
            where = escape(str(history.path))
            err.print(
                f"[dim]kept as training run #{kept.id} of stack {escape(kept_as)} in {where}[/]",
                highlight=False,
                soft_wrap=True,
            )
    return outcome.exit_code


def _options(floor, min_scaling, scaling, steps, say, image=None):
    from clusterctl.validate.train import TrainOptions

    return TrainOptions(
        floor=floor, min_scaling=min_scaling, scaling=scaling, steps=steps, say=say,
        container_image=image,
    )  # fmt: skip


def _from_log(target: Any, run: Any, floor: Any, preset: str):
    from clusterctl.train.judge import judge
    from clusterctl.validate.train import TrainOutcome

    return TrainOutcome(
        verdict=judge(
            run, floor, scaling_floor=None, scaling_note="scaling not measured: a log holds one run"
        ),
        preset=preset,
        sku=target.sku,
        target=f"log {target.name}",
        command="(from a log)",
        runs=(run,),
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def show(outcome: Any, *, as_json: bool, junit: Path | None) -> None:
    import json
    import sys

    from clusterctl.train.report import to_json, to_junit

    v = outcome.verdict
    if as_json:
        data = to_json(v, preset=outcome.preset, sku=outcome.sku, target=outcome.target,
                       command=outcome.command)  # fmt: skip
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        table = Table(title=f"DDP training ({outcome.preset} model) on {outcome.target}")
        for col in ("run", "nodes", "ranks", "tokens/s per GPU", "step median ms", "step p99 ms"):
            table.add_column(col, justify="left" if col == "run" else "right")
        for name, m in (("1 node (reference)", v.single), ("all nodes", v.metrics)):
            if m is not None:
                table.add_row(name, str(m.nodes), str(m.gpus), f"{m.tokens_per_s_per_gpu:,.0f}",
                              _ms(m.step_median_s), _ms(m.step_p99_s))  # fmt: skip
        out.print(table)
        if v.scaling is not None:
            judged = f" (floor {v.scaling_floor:.0%})" if v.scaling_floor is not None else ""
            out.print(f"scaling efficiency (weak): {v.scaling:.0%}{judged}")
        if v.floor.tokens_per_s_per_gpu is not None:
            out.print(f"floor: {v.floor.tokens_per_s_per_gpu:,.0f} tokens/s per GPU "
                      f"({escape(v.floor.source)})", soft_wrap=True)  # fmt: skip
        for r in v.reasons:
            out.print(f"[bold red]{escape(r)}[/]", soft_wrap=True)
        for n in v.notes:
            out.print(f"note: {escape(n)}", soft_wrap=True)
        colour = {"pass": "green", "fail": "bold red"}.get(v.status, "magenta")
        out.print(f"[{colour}]training validation: {v.status}[/] (exit {v.exit_code})")
    if junit is not None:
        try:
            junit.parent.mkdir(parents=True, exist_ok=True)
            junit.write_text(to_junit(v))
        except OSError as exc:
            err.print(f"[red]error:[/] {escape(path_problem(exc, '--junit'))}", highlight=False)
            raise typer.Exit(2) from None
