"""`clusterctl sandbox up/status/exec/reboot/fault/down`: the stack's nodes booted like VMs on this
machine (sandbox_vm.py). `clusterctl sandbox vm ...`, the old spelling, still works, hidden from
help, with a note on stderr."""

from __future__ import annotations

import sys

import typer

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

    @vm_app.callback()
    def old_spelling(ctx: typer.Context) -> None:
        print(OLD_SPELLING.format(cmd=ctx.invoked_subcommand or ""), file=sys.stderr)

    sandbox_app.add_typer(vm_app, name="vm", hidden=True)
    app.add_typer(sandbox_app, name="sandbox")
