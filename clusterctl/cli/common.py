"""What every command group shares: the consoles, the stack option, one way to refuse input."""

from __future__ import annotations

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
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


def bail(*lines: str) -> NoReturn:
    """One `error:` line per problem on stderr, exit 2."""
    for line in lines:
        err.print(f"[red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)
