"""The `clusterctl` command line."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from clusterctl import __version__
from clusterctl.cli.common import err, out
from clusterctl.errors import UserError

app = typer.Typer(
    name="clusterctl",
    help="Provision cloud GPU clusters with Pulumi, prove their NCCL bandwidth, tear them down.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: no `<bool>` after flags, `[user@]host` shown as written (not rich markup).
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        out.print(f"clusterctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    project_dir: Annotated[
        str | None,
        typer.Option(
            "--project-dir",
            help="The project folder (Pulumi.yaml + stacks/); default: the current folder or the "
            "nearest one above it with a Pulumi.yaml.",
            envvar="GPU_CLUSTERS_PROJECT_DIR",
            show_envvar=True,
        ),
    ] = None,
) -> None:
    """Provision cloud GPU clusters with Pulumi, prove their NCCL bandwidth, tear them down."""
    from clusterctl.project import PROJECT_DIR_ENV

    if project_dir:
        os.environ[PROJECT_DIR_ENV] = project_dir


def init(
    dest: Annotated[str, typer.Argument(help="The new project folder.")],
    example: Annotated[
        str,
        typer.Option(
            "--example",
            help="The example stack to start from (see `clusterctl init --example list`).",
        ),
    ],
) -> None:
    """Start a project of your own: Pulumi.yaml, the program and one example stack file."""
    from pathlib import Path

    from clusterctl.project import example_stacks, init_project

    if example == "list":
        out.print("\n".join(example_stacks()))
        return
    written = init_project(example, Path(dest))
    out.print(f"wrote {len(written)} files to {dest}:")
    for path in written:
        out.print(f"  {path}")
    out.print(f"next: cd {dest} && clusterctl plan -s {example}")


def _register_subcommands() -> None:
    from clusterctl.cli import lifecycle, nodes, plan, sandbox, validate

    plan.register(app)
    app.command()(init)
    sandbox.register(app)
    validate.register(app)
    lifecycle.register(app)
    nodes.register(app)


_register_subcommands()


def main() -> None:
    """Entry point: user errors print one line per problem and exit 2, never a traceback.

    Click's own usage errors (a missing option, say) already exit 2 with a usage line.
    """
    from rich.markup import escape

    try:
        app()
    except UserError as exc:
        for problem in exc.problems:
            err.print(f"[red]error:[/] {escape(problem)}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except Exception as exc:  # a bug: still no traceback unless asked for
        if os.environ.get("CLUSTERCTL_DEBUG"):
            raise
        err.print(
            f"[red]internal error:[/] {exc.__class__.__name__}: {escape(str(exc))} "
            "(set CLUSTERCTL_DEBUG=1 for the traceback)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(1)
