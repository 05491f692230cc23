"""`clusterctl sandbox up/status/exec/reboot/fault/down`: the stack's nodes booted like VMs on this
machine (sandbox_vm.py). `clusterctl sandbox vm ...`, the old spelling, still works, hidden from
help, with a note on stderr."""

from __future__ import annotations

import sys

import typer

from clusterctl.cli.common import need_sandbox

sandbox_app = typer.Typer(
    help="Boot a stack's cluster for real on this Linux machine (root; no cloud account).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
OLD_SPELLING = (
    "note: `clusterctl sandbox vm {cmd}` is now `clusterctl sandbox {cmd}`; the old spelling "
    "will be removed in a later release"
)


def register(app: typer.Typer) -> None:
    from clusterctl.cli.sandbox_vm import vm_app

    sandbox_app.registered_commands.extend(vm_app.registered_commands)

    # Runs before any sandbox command (and before a command's own --help is read): an installed
    # wheel has no clusterctl.sandbox, so every command says so in one line instead of a traceback.
    @sandbox_app.callback()
    def installed(ctx: typer.Context) -> None:
        need_sandbox(f"sandbox {ctx.invoked_subcommand or ''}".rstrip())

    @vm_app.callback()
    def old_spelling(ctx: typer.Context) -> None:
        print(OLD_SPELLING.format(cmd=ctx.invoked_subcommand or ""), file=sys.stderr)

    sandbox_app.add_typer(vm_app, name="vm", hidden=True)
    app.add_typer(sandbox_app, name="sandbox")
