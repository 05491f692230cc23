"""What every command group shares: the consoles, the stack option, one way to refuse input."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

out = Console()
err = Console(stderr=True)

StackOpt = Annotated[
    str,
    typer.Option(
        "--stack", "-s", help="Stack name: reads stacks/Pulumi.<stack>.yaml of the project."
    ),
]
OptionalStackOpt = Annotated[
    str | None, typer.Option("--stack", "-s", help="A deployed stack: use its outputs.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


def bail(*lines: str) -> NoReturn:
    """One `error:` line per problem on stderr, exit 2."""
    for line in lines:
        err.print(f"[red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


SandboxOpt = Annotated[
    bool, typer.Option("--sandbox", help="The running local sandbox (clusterctl sandbox vm).")
]
SandboxDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--sandbox-dir",
        help="The sandbox's workdir, if not /var/tmp/clusterctl-vm-sandbox (implies --sandbox).",
    ),
]


def sandbox_workdir(sandbox: bool, sandbox_dir: Path | None) -> str | None:
    if not (sandbox or sandbox_dir):
        return None
    from clusterctl.project import VM_WORKDIR

    return str(sandbox_dir or VM_WORKDIR)
