"""`clusterctl completion SHELL`: the named shell's completion script, on stdout.

typer's `--show-completion` detects the shell from the parent processes and fails ("Shell  not
supported.") where no shell started clusterctl (CI, a Dockerfile RUN, a setsid'd job); its
`bash` argument is not read. This names the shell instead and never detects one."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

COMPLETE_VAR = "_CLUSTERCTL_COMPLETE"


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"
    pwsh = "pwsh"


def register(app: typer.Typer) -> None:
    app.command()(completion)


def completion(
    shell: Annotated[Shell, typer.Argument(help="The shell whose completion script to print.")],
) -> None:
    """Print the shell completion script (e.g. `clusterctl completion bash >>~/.bashrc`)."""
    from typer._completion_shared import get_completion_script

    script = get_completion_script(
        prog_name="clusterctl", complete_var=COMPLETE_VAR, shell=shell.value
    )
    sys.stdout.write(script.rstrip("\n") + "\n")


# -- values: what a Tab after -s, --example, --sku or `stack select` offers ------------------------
# Completion runs on every Tab: these never raise (an unreadable project or catalog offers nothing).


def stack_names(incomplete: str) -> list[str]:
    """The current project's stacks (`clusterctl stacks`)."""
    from clusterctl.errors import UserError
    from clusterctl.project import find_project

    try:
        names = find_project().stacks()
    except (UserError, OSError):
        return []
    return [n for n in names if n.startswith(incomplete)]


def example_names(incomplete: str) -> list[str]:
    """The example stacks `init --example` copies, and `list`."""
    from clusterctl.project import example_stacks

    return [n for n in [*example_stacks(), "list"] if n.startswith(incomplete)]


def sku_names(incomplete: str) -> list[str]:
    """The catalog's VM types (`clusterctl catalog`)."""
    from clusterctl.errors import UserError
    from clusterctl.spec.catalog import catalog

    try:
        names = [s.name for s in catalog().skus]
    except (UserError, OSError, ValueError):
        return []
    return [n for n in names if n.startswith(incomplete)]
