"""`clusterctl validate --nccl`: register(app) adds the command to the main typer app.

Exit codes: 0 pass (warnings included), 1 fail, 2 could not run (bad input, unreachable host,
job did not start, output not parsable, nothing judged). Each problem is one line on stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from clusterctl.cli.common import bail, err, out
from clusterctl.errors import UserError


def register(app: typer.Typer) -> None:
    @app.command()
    def validate(
        nccl: Annotated[
            bool, typer.Option("--nccl", help="Run the NCCL all-reduce check.")
        ] = False,
        stack: Annotated[
            str | None, typer.Option("--stack", "-s", help="A deployed stack: use its outputs.")
        ] = None,
        host: Annotated[
            str | None,
            typer.Option(
                "--host", help="[user@]host[:port] of a Slurm scheduler (your ssh config applies)."
            ),
        ] = None,
        kubeconfig: Annotated[
            str | None,
            typer.Option("--kubeconfig", help="A Kubernetes cluster with the MPI operator."),
        ] = None,
        sandbox: Annotated[
            str | None, typer.Option("--sandbox", help="Workdir of a running local Slurm sandbox.")
        ] = None,
        from_log: Annotated[
            Path | None, typer.Option("--from-log", help="Judge an all_reduce_perf output file.")
        ] = None,
        sku: Annotated[str | None, typer.Option("--sku", help="VM type, for the baseline.")] = None,
        nodes: Annotated[
            int | None, typer.Option("--nodes", min=1, help="Number of nodes.")
        ] = None,
        partition: Annotated[
            str | None, typer.Option("--partition", help="Slurm partition.")
        ] = None,
        sweep: Annotated[
            bool, typer.Option("--sweep", help="Also test 2-node pairs to find bad nodes.")
        ] = False,
        drain: Annotated[
            bool, typer.Option("--drain", help="Drain (Slurm) or cordon (Kubernetes) bad nodes.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
        junit: Annotated[
            Path | None, typer.Option("--junit", help="Write a JUnit XML report here.")
        ] = None,
        fail_below: Annotated[
            float | None, typer.Option("--fail-below", min=0.0, help="Floor in GB/s busbw.")
        ] = None,
        warn_below: Annotated[
            float | None, typer.Option("--warn-below", min=0.0, help="Warning level, GB/s busbw.")
        ] = None,
        min_bytes: Annotated[str | None, typer.Option("-b", "--min-bytes")] = None,
        max_bytes: Annotated[str | None, typer.Option("-e", "--max-bytes")] = None,
    ) -> None:
        """Prove the fabric delivers: all_reduce bus bandwidth against the SKU's baseline.

        Exit 0 pass (or warn), 1 fail, 2 could not run.
        """
        from clusterctl.validate import CouldNotRun

        if not nccl:
            bail("say what to validate: --nccl (the only check so far)")
        try:
            outcome = _run(
                stack, host, kubeconfig, sandbox, from_log, sku, nodes, partition,
                sweep, drain, fail_below, warn_below, min_bytes, max_bytes, quiet=as_json,
            )  # fmt: skip
        except (CouldNotRun, UserError) as exc:
            bail(*([str(exc)] if isinstance(exc, CouldNotRun) else exc.problems))
        _report(outcome, as_json=as_json, junit=junit)
        raise typer.Exit(outcome.exit_code)


def _run(
    stack, host, kubeconfig, sandbox, from_log, sku, nodes, partition,
    sweep, drain, fail_below, warn_below, min_bytes, max_bytes, *, quiet: bool,
):  # fmt: skip
    from clusterctl.validate.run import Options, validate, with_stack_overrides
    from clusterctl.validate.targets import resolve

    target = resolve(
        stack=stack, host=host, kubeconfig=kubeconfig, sandbox=sandbox, from_log=from_log,
        sku=sku, nodes=nodes, partition=partition,
    )  # fmt: skip
    opts = Options(
        sweep=sweep, drain=drain, fail_below=fail_below, warn_below=warn_below,
        min_bytes=min_bytes, max_bytes=max_bytes,
        say=(lambda _: None) if quiet else (lambda m: err.print(f"[dim]{m}[/]", highlight=False)),
    )  # fmt: skip
    if stack is not None:
        from clusterctl.spec.load import load_stack_spec
        from clusterctl.spec.model import field_path

        spec, _ = load_stack_spec(stack)
        where = f"stack {stack} {field_path('validation', 'nccl')}"
        opts = with_stack_overrides(opts, spec.validation.nccl, where)
    return validate(target, opts)


def outcome_json(outcome) -> dict:
    from clusterctl.nccl.report import to_json

    data = to_json(outcome.verdicts)
    data["status"] = outcome.status
    data["exit_code"] = outcome.exit_code
    data["notes"] = list(outcome.notes)
    data["drained"] = list(outcome.drained)
    if outcome.sweep is not None:
        loc = outcome.sweep.localization
        data["sweep"] = {
            "floor_gbps": outcome.sweep.floor_gbps,
            "calibration": outcome.sweep.calibration,
            "rounds": loc.rounds,
            "pairs_measured": loc.pairs_measured,
            "good": list(loc.good),
            "suspects": [
                {
                    "node": s.node,
                    "status": s.status,
                    "reason": s.reason,
                    "figures": [
                        {
                            "round": f.round,
                            "pair": list(f.pair),
                            "busbw_gbps": f.busbw_gbps,
                            "passed": f.passed,
                        }
                        for f in s.figures
                    ],
                }
                for s in loc.suspects
            ],
            "peer_suspects": [
                {
                    "pair": list(p.pair),
                    "busbw_gbps": p.busbw_gbps,
                    "peer_median_gbps": p.peer_median_gbps,
                }
                for p in outcome.sweep.peers
            ],
        }
    return data


def _report(outcome, *, as_json: bool, junit: Path | None) -> None:
    from clusterctl.nccl.report import render_table, to_junit

    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(to_junit(outcome.verdicts))
    if as_json:
        sys.stdout.write(json.dumps(outcome_json(outcome), indent=2) + "\n")
        return
    out.print(render_table(outcome.verdicts))
    if outcome.sweep is not None:
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
        for p in outcome.sweep.peers:
            out.print(
                f"[yellow]peer check[/] {' + '.join(p.pair)}: {p.busbw_gbps:.3g} GB/s is "
                f"{p.ratio:.0%} of the other pairs' median {p.peer_median_gbps:.3g}"
            )
    for note in outcome.notes:
        out.print(f"note: {note}")
    if outcome.drained:
        out.print(f"drained: {', '.join(outcome.drained)}")
    colour = {"pass": "green", "warn": "yellow", "fail": "bold red"}.get(outcome.status, "magenta")
    out.print(f"[{colour}]NCCL validation: {outcome.status}[/] (exit {outcome.exit_code})")


def main() -> None:
    """`python -m clusterctl.cli.validate validate --nccl ...`, until cli.py registers it."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    register(app)

    @app.callback()
    def _root() -> None:
        pass

    app()


if __name__ == "__main__":
    main()
