"""`clusterctl sandbox ...`: the stack's nodes booted like VMs on this machine (`sandbox vm`)."""

from __future__ import annotations

import typer

sandbox_app = typer.Typer(
    help="Boot a stack's cluster for real on this Linux machine (root; no cloud account).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    from clusterctl.cli.sandbox_vm import vm_app

    sandbox_app.add_typer(vm_app, name="vm")
    app.add_typer(sandbox_app, name="sandbox")
