"""The sandbox's commands, `clusterctl sandbox up/status/exec/reboot/fault/down` (cli/sandbox.py
registers them, also under the old `sandbox vm` spelling): the stack's nodes booted like VMs.

Each node is a systemd-nspawn container running systemd and cloud-init on the stack's own rendered
user-data (clusterctl/sandbox/vm); `--explain` lists every way the sandbox differs from the cloud.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from clusterctl import project
from clusterctl.cli.common import err, out
from clusterctl.errors import UserError

VM_WORKDIR = project.VM_WORKDIR
vm_app = typer.Typer(
    help="Boot the stack's scheduler and GPU nodes like VMs (systemd + cloud-init; root).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
WorkdirOpt = Annotated[Path, typer.Option("--workdir", help="Where the sandbox keeps its state.")]


def _need_root() -> None:
    if os.geteuid() != 0:
        raise UserError("the VM sandbox needs root (network namespaces, overlay mounts, nspawn)")


@vm_app.command("up")
def up_cmd(
    stack: Annotated[
        str | None, typer.Option("--stack", "-s", help="Stack to boot (azure-h100).")
    ] = None,
    nodes: Annotated[int, typer.Option("--nodes", "-n", min=1, max=16, help="GPU nodes.")] = 2,
    explain: Annotated[
        bool, typer.Option("--explain", help="Only list what stands in for the cloud, and why.")
    ] = False,
    workdir: WorkdirOpt = VM_WORKDIR,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait for boot.")] = 900,
    slurm: Annotated[
        str | None,
        typer.Option(
            "--slurm",
            help="Slurm release the nodes install: 26.05 (sid, default) or 24.11 (trixie), the "
            "two around Azure's 25.11 (default: $GPUCL_SANDBOX_SLURM or 26.05).",
        ),
    ] = None,
) -> None:
    """Boot the scheduler and N GPU nodes from the stack's user-data, then check them: cloud-init,
    failed units, Slurm logs, munge across nodes. Exit 1 with each problem's node and stage."""
    from clusterctl.sandbox.vm import boot, checks, repo, substitutions
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.load import load_stack_spec

    # --explain alone needs no project; with -s it also says whether this stack can boot here
    given = stack is not None
    stack = stack or "azure-h100"
    refused = substitutions.cannot_boot(load_stack_spec(stack, [])[0], catalog()) if given else None
    if explain:
        out.print(substitutions.explain(), highlight=False, markup=False)
        if refused:
            out.print(f"stack {stack}: cannot boot here: {refused}", markup=False, soft_wrap=True)
        return
    if refused:
        raise UserError(f"sandbox up -s {stack}: {refused}")
    try:
        slurm = repo.slurm_version(slurm)
    except ValueError as exc:
        raise UserError(f"sandbox up --slurm: {exc}") from None
    _need_root()
    from clusterctl import host_tools

    gone = host_tools.missing()
    if gone:  # before anything is made: nothing to clean up
        raise UserError([f"sandbox up: {line}" for line in host_tools.missing_lines(gone)])
    from clusterctl.plan.program import make_plan, write_plan
    from clusterctl.spec.topology import scale_sets_of

    plan = make_plan(stack, [f"partitions[0].nodes={nodes}"])  # slurm.conf lists what boots
    plan_dir = workdir.parent / f"{workdir.name}-plan"
    write_plan(plan, plan_dir)
    start = time.perf_counter()
    say = lambda m: err.print(f"[dim]{m}[/]", highlight=False)  # noqa: E731
    try:
        reports = boot.up(
            boot.cluster_from_plan(plan_dir, nodes), workdir, timeout, log=say, slurm=slurm
        )
    except boot.BootError as exc:
        raise UserError(str(exc)) from None
    names = list(reports)
    run = lambda n, a: boot.run(workdir, n, a)  # noqa: E731
    problems = checks.boot_problems(reports)
    problems += checks.slurm_log_problems(run, names)
    problems += checks.munge_problems(run, names)
    problems += checks.daemon_problems(run, {n: s["role"] for n, s in boot.status(workdir).items()})
    if not problems:
        scheduler = names[0]
        part = plan.spec.partitions[0]
        slurm_names = [
            h
            for g in scale_sets_of(part.name, nodes, part.max_nodes_per_scale_set)
            for h in g.hostnames()
        ]
        problems += checks.slurm_problems(run, scheduler, slurm_names, "gpu:")
        if not problems:
            problems += checks.sbatch_problems(run, scheduler, plan.spec.ssh.admin_user)
    out.print(f"sandbox up in {time.perf_counter() - start:.1f} s: {', '.join(names)}")
    for p in problems:
        out.print(f"[red]problem:[/] {escape(p.line())}", highlight=False, soft_wrap=True)
    out.print(f"logs: {workdir}/logs; stop: clusterctl sandbox down --workdir {workdir}")
    raise typer.Exit(1 if problems else 0)


@vm_app.command("status")
def status_cmd(workdir: WorkdirOpt = VM_WORKDIR) -> None:
    """Each node: role, address, whether it runs, `systemctl is-system-running`."""
    from clusterctl.sandbox.vm import boot

    nodes = boot.status(workdir)
    if not nodes:
        from clusterctl.sandbox.vm import report

        found = report.leftovers(workdir)
        if found:  # its state file is gone, the sandbox is not
            out.print(
                f"no state file in {workdir}, but a sandbox is there: {'; '.join(found)}; "
                f"`clusterctl sandbox down --workdir {workdir}` releases it by name",
                highlight=False,
                soft_wrap=True,
            )
        else:
            out.print(f"no VM sandbox in {workdir}")
        raise typer.Exit(1)
    for name, n in nodes.items():
        state = n["system"] if n["running"] else "[red]stopped[/]"
        out.print(f"{name} ({n['role']}, {n['address']}): {state}")


@vm_app.command(
    "exec",
    # `-h` belongs to the node's command (`sinfo -h`): only --help is ours here.
    context_settings={
        "allow_extra_args": True,
        "ignore_unknown_options": True,
        "help_option_names": ["--help"],
    },
)
def exec_cmd(
    ctx: typer.Context,
    node: Annotated[str | None, typer.Option("--node", help="Default: the scheduler.")] = None,
    workdir: WorkdirOpt = VM_WORKDIR,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", min=0.1, help="Stop the command after this many seconds (exit 124)."
        ),
    ] = None,
) -> None:
    """Run a command on a node, e.g. `clusterctl sandbox exec -- sinfo`: its output streams
    as it comes, it runs as long as it runs (or --timeout), Ctrl-C reaches it; exits with its
    exit code."""
    from clusterctl.sandbox.vm import attach, boot

    if not ctx.args:
        raise UserError("sandbox exec: give a command after --, e.g. -- sinfo")
    nodes = boot.status(workdir)
    target = node or next((n for n, v in nodes.items() if v["role"] == "scheduler"), None)
    if target is None:
        raise UserError(f"no VM sandbox in {workdir}")
    try:
        argv = boot.exec_argv(workdir, target, list(ctx.args))
    except boot.BootError as exc:
        raise UserError(str(exc)) from None
    sys.stdout.flush()
    code = attach.run_attached(argv, timeout=timeout)
    if code == attach.TIMED_OUT and timeout is not None:
        err.print(
            f"sandbox exec: stopped after --timeout {timeout:g} s on {target}", highlight=False
        )
    raise typer.Exit(code)


@vm_app.command("reboot")
def reboot_cmd(node: str, workdir: WorkdirOpt = VM_WORKDIR) -> None:
    """Reboot one node (it keeps its disk, as a VM does) and wait until it is up again."""
    from clusterctl.sandbox.vm import boot, report

    _need_root()
    try:
        rep = boot.reboot(workdir, node, log=lambda m: err.print(f"[dim]{m}[/]"))
    except boot.BootError as exc:
        raise UserError(str(exc)) from None
    out.print(report.summary({node: rep}), highlight=False, markup=False)


FAULTS = (
    "slow-link",
    "fail-health",
    "fail-deep",
    "fail-dcgm",
    "kill-slurmd",
    "start-fails",
    "boot-hangs",
    "preempt",
    "slow-gpu",
    "drop-hca",
    "no-gdr",
    "clear",
)
"""faults.KINDS, named here so that `--help` imports nothing of the sandbox (a unit test keeps the
two equal)."""


@vm_app.command("fault")
def fault_cmd(
    node: Annotated[str, typer.Argument(help="Node hostname, as `status` lists it.")],
    kind: Annotated[
        str,
        typer.Argument(
            help=" | ".join(FAULTS),
            metavar="FAULT",
        ),
    ],
    rate: Annotated[str, typer.Option("--rate", help="slow-link: the link's rate (tbf).")] = (
        "20mbit"
    ),
    device: Annotated[
        str | None, typer.Option("--device", help="drop-hca: which HCA (default: the last).")
    ] = None,
    workdir: WorkdirOpt = VM_WORKDIR,
) -> None:
    """Inject a fault into a node (or `clear` its faults): a slow link, a GPU gone (the health
    check drains the node), a deep-tier check failing, slurmd killed, its VM unable to start,
    its boot never reaching slurmd, a spot eviction notice, a slow GPU (its CPU capped: the
    training check's straggler), an InfiniBand HCA gone, GPUDirect RDMA off."""
    from clusterctl.sandbox.vm import faults

    _need_root()
    if kind not in faults.KINDS:
        raise UserError(f"FAULT: unknown fault {kind!r}; use one of {', '.join(faults.KINDS)}")
    if device is not None and kind != "drop-hca":
        raise UserError(f"--device: names the HCA of drop-hca only, not of {kind}; leave it out")
    try:
        done = faults.inject(workdir, node, kind, rate=rate, device=device)
        out.print(done, highlight=False, markup=False)
    except faults.FaultError as exc:
        raise UserError(str(exc)) from None


@vm_app.command("down")
def down_cmd(workdir: WorkdirOpt = VM_WORKDIR) -> None:
    """Remove everything up made (processes, mounts, namespaces, loop devices); logs stay."""
    from clusterctl.sandbox.vm import boot, report

    _need_root()
    boot.down(workdir, log=lambda m: err.print(f"[dim]{m}[/]"))
    left = report.leftovers(workdir)
    if left:
        raise UserError(f"down left: {', '.join(left)}")
    out.print(f"VM sandbox in {workdir} is down; nothing left running")
