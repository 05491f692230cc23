"""`clusterctl stacks`: the stack files of the project, as `pulumi stack ls` lists stacks."""

from __future__ import annotations

import json
import sys

import typer

from clusterctl.cli.common import JsonOpt, out


def register(app: typer.Typer) -> None:
    app.command()(stacks)


def stacks(as_json: JsonOpt = False) -> None:
    """List the stacks of the project: each stacks/Pulumi.<stack>.yaml, for `plan -s STACK`."""
    from clusterctl.project import find_project

    project = find_project()
    names = project.stacks()
    if as_json:
        doc = {"project": str(project.dir), "stacks": names}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    if not names:
        out.print(
            f"no stack files in {project.stack_config_dir}: add one with "
            f"`clusterctl init --example azure-h100 {project.dir} --force`",
            highlight=False,
        )
        return
    for name in names:
        out.print(name, highlight=False)
