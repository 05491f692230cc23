"""`clusterctl sandbox up/status/exec/down`: the stack's Slurm cluster on this machine."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from clusterctl.cli.common import out
from clusterctl.errors import UserError
from clusterctl.project import DEFAULT_WORKDIR

sandbox_app = typer.Typer(
    help="Boot a stack's Slurm cluster for real on this Linux machine (root; no cloud account).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

WorkdirOpt = Annotated[
    Path, typer.Option("--workdir", help="Where the sandbox keeps its state, keys and logs.")
]


def _run(fn, *args):
    from clusterctl import sandbox

    try:
        return fn(*args)
    except sandbox.SandboxError as exc:
        raise UserError(str(exc)) from None


@sandbox_app.command("up")
def up_cmd(
    stack: Annotated[
        str, typer.Option("--stack", "-s", help="Stack whose Slurm files to boot.")
    ] = ("azure-h100"),
    nodes: Annotated[int, typer.Option("--nodes", "-n", help="GPU nodes to boot (1-16).")] = 4,
    workdir: WorkdirOpt = DEFAULT_WORKDIR,
) -> None:
    """Boot slurmctld, sshd and N slurmd nodes, each in its own network namespace.

    The nodes pose as the stack's GPU nodes (8 GPUs each, mknod'ed stand-ins) with the stack's
    slurm.conf, gres.conf, cgroup.conf, topology.conf and health check.
    """
    from clusterctl.sandbox import stack as sandbox_flow

    start = time.perf_counter()
    with out.status("booting the sandbox...") as status:
        info = sandbox_flow.up(stack, nodes, workdir, lambda msg: status.update(msg))
    out.print(
        f"sandbox up in {time.perf_counter() - start:.1f}s: {len(info['nodes'])} nodes of "
        f"{info['sku']} ({info['partition']}), controller {info['controller']}"
    )
    out.print(f"  try: clusterctl sandbox exec -- srun -N{len(info['nodes'])} hostname")
    out.print("  stop: clusterctl sandbox down")


@sandbox_app.command("status")
def status_cmd(
    workdir: WorkdirOpt = DEFAULT_WORKDIR,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show whether the sandbox runs, its daemons and `sinfo`."""
    from clusterctl import sandbox

    st = _run(sandbox.status, workdir)
    if st is None:
        out.print(f"no sandbox in {workdir}")
        raise typer.Exit(1)
    if as_json:
        sys.stdout.write(
            json.dumps({"phase": st.phase, "daemons": st.daemons, "healthy": st.healthy}) + "\n"
        )
        return
    out.print(f"phase: {st.phase}, healthy: {st.healthy}")
    for name, alive in sorted(st.daemons.items()):
        out.print(f"  {name}: {'running' if alive else '[red]dead[/]'}")
    out.print(st.sinfo, highlight=False)


@sandbox_app.command(
    "exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def exec_cmd(ctx: typer.Context, workdir: WorkdirOpt = DEFAULT_WORKDIR) -> None:
    """Run a command on the controller, e.g. `clusterctl sandbox exec -- srun -N4 hostname`."""
    from clusterctl import sandbox

    if not ctx.args:
        raise UserError("sandbox exec: give a command after --, e.g. -- sinfo")
    result: subprocess.CompletedProcess = _run(sandbox.exec, workdir, list(ctx.args))
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    raise typer.Exit(result.returncode)


@sandbox_app.command("down")
def down_cmd(workdir: WorkdirOpt = DEFAULT_WORKDIR) -> None:
    """Stop every daemon; remove namespaces, links, mounts, cgroups, files (even after a crash)."""
    from clusterctl.sandbox import stack as sandbox_flow

    sandbox_flow.down(workdir)
    out.print(f"sandbox in {workdir} is down; nothing left running")


def register(app: typer.Typer) -> None:
    from clusterctl.cli.sandbox_vm import vm_app

    sandbox_app.add_typer(vm_app, name="vm")
    app.add_typer(sandbox_app, name="sandbox")
