"""`clusterctl stacks`: the stack files of the project, as `pulumi stack ls` lists stacks (the
selected one marked `*`), with what each would build: cloud, region, scheduler, GPU SKU, nodes.
A file `plan` would refuse is listed with its first problem, not as if it were usable."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass

import typer

from clusterctl.cli.common import JsonOpt, out
from clusterctl.errors import UserError


@dataclass(frozen=True)
class StackRow:
    name: str
    selected: bool
    cloud: str | None = None
    region: str | None = None
    scheduler: str | None = None
    sku: str | None = None
    """The GPU partitions' SKUs, comma-separated."""
    nodes: int | None = None
    """GPU nodes, all partitions together."""
    problem: str | None = None
    """Why `plan -s NAME` refuses it (its first problem); None: it plans."""


def register(app: typer.Typer) -> None:
    app.command()(stacks)


def _row(name: str, selected: str | None) -> StackRow:
    from clusterctl.spec.load import load_stack_spec

    try:
        spec, _ = load_stack_spec(name)
    except UserError as exc:
        problems = exc.problems
        more = (
            f" (and {len(problems) - 1} more: clusterctl plan -s {name})"
            if len(problems) > 1
            else ""
        )
        return StackRow(name, name == selected, problem=problems[0] + more)
    skus = ",".join(dict.fromkeys(p.sku for p in spec.partitions))
    return StackRow(
        name, name == selected, spec.cloud, spec.region, spec.scheduler, skus, spec.total_nodes
    )


def stacks(as_json: JsonOpt = False) -> None:
    """List the stacks of the project: each stacks/Pulumi.<stack>.yaml, with its cloud, region,
    scheduler, GPU SKU and node count (`*`: the selected stack); a file `plan` refuses shows its
    first problem."""
    import os

    from clusterctl.cli.common import STACK_ENV, selected_stack
    from clusterctl.project import find_project

    project = find_project()
    chosen = os.environ.get(STACK_ENV) or selected_stack()
    rows = [_row(name, chosen) for name in project.stacks()]
    if as_json:
        doc = {"project": str(project.dir), "selected": chosen,
               "stacks": [asdict(r) for r in rows]}  # fmt: skip
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    if not rows:
        out.print(
            f"no stack files in {project.stack_config_dir}: add one with "
            f"`clusterctl init --example azure-h100 {project.dir} --force`",
            highlight=False,
        )
        return
    lines: list[tuple[str, ...]] = [("NAME", "CLOUD", "REGION", "SCHEDULER", "SKU", "NODES")]
    for r in rows:
        name = r.name + ("*" if r.selected else "")
        if r.problem is not None:
            lines.append((name, "-", "-", "-", "-", "-"))
        else:
            lines.append(
                (name, *(str(v) for v in (r.cloud, r.region, r.scheduler, r.sku, r.nodes)))
            )
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:  # columns as `pulumi stack ls` prints them: plain, no trailing blanks
        text = "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True))
        out.print(text.rstrip(), highlight=False, soft_wrap=True)
    for r in rows:
        if r.problem is not None:
            out.print(f"{r.name}: refused by plan: {r.problem}", highlight=False, soft_wrap=True)
