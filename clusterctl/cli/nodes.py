"""`clusterctl node replace`: day-2 node operations on a deployed Slurm stack.

Exit codes: 0 the node is back and passed its checks; 1 it did not come back or failed its checks
(left drained, with the reason); 2 refused (a running job without --force) or could not run.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer

from clusterctl.cli.common import (
    JsonOpt,
    OptionalStackOpt,
    SandboxDirOpt,
    SandboxOpt,
    bail,
    err,
    out,
    sandbox_workdir,
)


@dataclass
class NodeDeps:
    """What `node replace` takes from the outside world; tests pass their own."""

    target: Callable[[str | None, str | None], Any] | None = None
    """(stack, sandbox workdir) -> (Ssh-like runner, admin user, drain prefix)."""
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = field(default=time.monotonic)


def _scheduler_ssh(stack: str | None, sandbox: str | None):
    """The scheduler of a deployed stack, or of the running VM sandbox, over SSH as its admin."""
    from clusterctl.cli.common import resolve_target
    from clusterctl.errors import UserError
    from clusterctl.validate.targets import SlurmTarget
    from clusterctl.validate.transport import Ssh

    if bool(stack) == bool(sandbox):
        raise UserError("node replace: name one cluster: -s STACK or --sandbox")
    target = resolve_target(stack=stack, sandbox=sandbox)
    if not isinstance(target, SlurmTarget):
        raise UserError(f"node replace -s {stack}: only Slurm stacks have nodes to replace")
    return Ssh(target.ssh), target.ssh.user, target.drain_prefix


def register(app: typer.Typer, *, deps: NodeDeps | None = None) -> None:
    d = deps or NodeDeps()
    node = typer.Typer(help="Day-2 operations on a deployed Slurm cluster's nodes.")
    app.add_typer(node, name="node")

    @node.command()
    def replace(
        name: Annotated[str, typer.Argument(help="The Slurm node name, e.g. gpu-pg0-3.")],
        stack: OptionalStackOpt = None,
        sandbox: SandboxOpt = False,
        sandbox_dir: SandboxDirOpt = None,
        redeploy: Annotated[
            bool,
            typer.Option("--redeploy", help="Move the VM to new hardware instead of reimaging."),
        ] = False,
        force: Annotated[
            bool, typer.Option("--force", help="Requeue the node's running jobs and go ahead.")
        ] = False,
        timeout_minutes: Annotated[
            int, typer.Option("--timeout", min=1, help="How long to wait for it to come back.")
        ] = 45,
        as_json: JsonOpt = False,
    ) -> None:
        """Replace a bad node under its own name: drain, reimage (or --redeploy), wait for it to
        register again, and return it to service only once its health check passes. Refuses a
        node with a running job unless --force."""
        from clusterctl.cli.selection import stack_unless
        from clusterctl.nodes.replace import Replace
        from clusterctl.power.names import NODE_NAME
        from clusterctl.validate import CouldNotRun

        stack = stack_unless(stack, sandbox, sandbox_dir)
        if not NODE_NAME.match(name):
            bail(f"node replace: '{name}' is not a node name of a cluster (<partition>-pg<k>-<n>)")
        ssh, user, prefix = (d.target or _scheduler_ssh)(
            stack, sandbox_workdir(sandbox, sandbox_dir)
        )
        job = Replace(
            ssh,
            name,
            user,
            prefix,
            "redeploy" if redeploy else "reimage",
            force,
            timeout_s=timeout_minutes * 60.0,
            sleep=d.sleep,
            clock=d.clock,
        )
        try:
            ok = job.run()
        except CouldNotRun as exc:
            for line in job.log:
                err.print(f"  {line}", highlight=False)
            bail(str(exc))
        if as_json:
            doc = {"node": name, "action": job.action, "returned": ok, "log": list(job.log)}
            sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        else:
            for line in job.log:
                out.print(line, highlight=False)
        if not ok:
            raise typer.Exit(1)
