"""The selected stack, as `pulumi stack select` keeps one: `-s STACK` wins, then $CLUSTERCTL_STACK,
then the stack `clusterctl stack select NAME` recorded for this project.

The record is a file in the project (`.clusterctl/stack`, beside the validation history), so two
checkouts or projects never share one the way Pulumi's per-user workspace files can surprise;
the variable is the `PULUMI_STACK` Pulumi users ask for (pulumi/pulumi#13550) for CI and direnv.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from clusterctl.cli.common import (
    STACK_ENV,
    default_stack,
    out,
    selected_file,
    selected_stack,
    stack_names_for_completion,
)
from clusterctl.errors import UserError

if TYPE_CHECKING:
    from clusterctl.project import Project


def stack_unless(stack: str | None, *other_targets: object) -> str | None:
    """For commands where -s is one target among others (`validate`, `node replace`): -s, else
    with no other target named, $CLUSTERCTL_STACK or the selected stack."""
    if stack is not None or any(t not in (None, False) for t in other_targets):
        return stack
    return os.environ.get(STACK_ENV) or selected_stack()


def check_stack_name(name: str, project: Project) -> None:
    """A stack of this project: one line with the stacks there (and the closest) otherwise."""
    import difflib

    names = project.stacks()
    if name in names:
        return
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise UserError(
        f"stack select {name}: no stacks/Pulumi.{name}.yaml in {project.stack_config_dir}; "
        f"{hint}stacks: {', '.join(names) or 'none (clusterctl init --example NAME)'}"
    )


stack_app = typer.Typer(
    help="The selected stack: the one -s means when not given (as `pulumi stack select`).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(stack_app, name="stack")


@stack_app.command("select")
def select(
    name: Annotated[
        str,
        typer.Argument(
            help="A stack of this project (`clusterctl stacks`).",
            autocompletion=stack_names_for_completion,
        ),
    ],
) -> None:
    """Select STACK for this project: commands then take it when -s is not given."""
    from clusterctl.project import find_project

    project = find_project()
    check_stack_name(name, project)
    path = selected_file(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(name + "\n", encoding="utf-8")
    out.print(f"selected stack {name} for {project.dir}", highlight=False, soft_wrap=True)
    if os.environ.get(STACK_ENV) not in (None, "", name):
        out.print(
            f"note: {STACK_ENV}={os.environ[STACK_ENV]} is set and wins over the selection",
            highlight=False,
            soft_wrap=True,
        )


@stack_app.command("unselect")
def unselect() -> None:
    """Forget the selected stack of this project: -s is needed again."""
    from clusterctl.project import find_project

    path = selected_file(find_project())
    path.unlink(missing_ok=True)
    out.print("no stack selected", highlight=False)


@stack_app.command("show")
def show() -> None:
    """Print the stack -s defaults to, and where that comes from (exit 2 if none)."""
    env = os.environ.get(STACK_ENV)
    if env:
        out.print(f"{env} (from {STACK_ENV})", highlight=False)
        return
    name = default_stack()
    out.print(f"{name} (selected: clusterctl stack select)", highlight=False)
