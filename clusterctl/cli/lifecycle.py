"""`clusterctl up / status / down`: register(app) adds them to the main typer app.

Exit codes: 0 done; 1 a Pulumi operation failed, the confirmation was refused, or `down` could not
prove the stack gone (resources left in the stack or tagged survivors in the cloud); 2 bad input
or a missing/unusable Pulumi CLI (UserError, printed by clusterctl.cli.main).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from clusterctl.cli.common import JsonOpt, StackOpt, bail, err, out
from clusterctl.errors import UserError
from clusterctl.figures import usd
from clusterctl.lifecycle.errors import OperationFailed
from clusterctl.lifecycle.retry import DEFAULT_DELAYS, Backoff
from clusterctl.platform import cloud_of, scheduler_of

if TYPE_CHECKING:
    from clusterctl.lifecycle.capacity import CapacitySource
    from clusterctl.lifecycle.survivors import SurvivorFinder
    from clusterctl.power.down_billing import DownBillingRecord
    from clusterctl.spec.model import ClusterSpec


def _finder_for(spec: ClusterSpec) -> SurvivorFinder:
    from clusterctl.lifecycle.survivors import finder_for

    return finder_for(spec)


def _capacity_for(spec: ClusterSpec) -> CapacitySource | None:
    """Azure answers capacity questions before `up` (SKU offered, vCPU quota); AWS: not yet."""
    if not cloud_of(spec.cloud).quota_preflight:
        return None
    from clusterctl.lifecycle.capacity_azure import AzureCapacity

    return AzureCapacity()


def _read_down_billing(spec: ClusterSpec, outputs: dict) -> DownBillingRecord | str | None:
    """The scheduler's record of DOWN nodes whose VM bills (gpucl-power return writes it every
    5 minutes), over ssh as its admin; why not, as a str; None for a cluster that keeps none."""
    from clusterctl.lifecycle.status import scheduler_login
    from clusterctl.power.down_billing import parse, record_path
    from clusterctl.power.names import SCHED
    from clusterctl.validate import CouldNotRun
    from clusterctl.validate.transport import Ssh, SshTarget

    login = scheduler_login(outputs)
    if login is None:
        return None
    path = record_path(spec.name, SCHED)
    ssh = Ssh(SshTarget(host=login[0], user=login[1]))
    try:
        proc = ssh.run(f"cat {path}", timeout=30, check=False)
    except CouldNotRun as exc:
        return str(exc)
    if proc.returncode != 0:
        return f"no {path} on the scheduler yet (gpucl-power return writes it every 5 minutes)"
    try:
        return parse(proc.stdout)
    except ValueError as exc:
        return str(exc)


@dataclass
class Deps:
    """What the commands take from the outside world; tests pass their own."""

    finder: Callable[[ClusterSpec], SurvivorFinder] = _finder_for
    capacity: Callable[[ClusterSpec], CapacitySource | None] = _capacity_for
    interactive: Callable[[], bool] = field(default=lambda: sys.stdin.isatty())
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    backoff: Backoff = field(default_factory=lambda: Backoff(DEFAULT_DELAYS, time.sleep))
    down_billing: Callable[[ClusterSpec, dict], DownBillingRecord | str | None] = _read_down_billing


def register(app: typer.Typer, *, deps: Deps | None = None) -> None:
    d = deps or Deps()

    @app.command()
    def up(
        stack: StackOpt,
        as_json: JsonOpt = False,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask; for CI.")] = False,
        allow_replace: Annotated[
            bool,
            typer.Option(
                "--allow-replace",
                help="Accept edits that replace something holding data or running jobs.",
            ),
        ] = False,
    ) -> None:
        """Create or update the cluster (`pulumi up` through the Automation API).

        First a preview: per edited field what it does (in place, replaces what, refused), what
        changes and the cost per hour before and after; then asks (--yes to skip; without a
        terminal --yes is required). An edit that replaces the scheduler, the VNet, a scale set
        or the data disk needs --allow-replace; a refused one exits 2. Shows progress, then the
        stack outputs and the cost per hour; with validation.nccl.onDeploy the NCCL verdict.
        Needs the Pulumi CLI and cloud credentials.
        """
        _up(stack, as_json, yes, d, allow_replace)

    @app.command()
    def status(stack: StackOpt, as_json: JsonOpt = False) -> None:
        """What runs, since when, nodes per partition, money spent so far (catalog prices), and
        on Slurm every node held DOWN while its VM still bills (read from the scheduler)."""
        _status(stack, as_json, d)

    @app.command()
    def down(
        stack: StackOpt,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask; for scripts.")] = False,
        include_storage: Annotated[
            bool,
            typer.Option(
                "--include-storage",
                help="Also delete the shared storage (/home, /sched) that is kept by default.",
            ),
        ] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Destroy the cluster, then prove nothing is left billing.

        Shows what goes and the cost so far, asks (--yes to skip; without a terminal --yes is
        required), refreshes, destroys (retrying known transient dependency failures), checks that
        the stack is empty and asks the cloud for anything still tagged with the stack. Shared
        storage is kept unless --include-storage. Exit 1 if anything unexpected is left. With
        --json the progress goes to stderr and one JSON document to stdout.
        """
        _down(stack, yes, include_storage, d, as_json)


@contextmanager
def _operation() -> Iterator[None]:
    try:
        yield
    except OperationFailed as exc:
        err.print(f"[red]pulumi {exc.op} failed:[/]", highlight=False)
        for line in exc.lines:
            err.print(f"  {line}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None


def _context(stack: str):
    from clusterctl.lifecycle.workspace import find_project, load_spec_for

    project = find_project()
    return project, load_spec_for(project, stack)


def _cost(spec: ClusterSpec):
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.cost import cost_per_hour

    return cost_per_hour(spec, catalog())


def _select(project, stack: str):
    """The stack, or None when the backend has no such stack."""
    from pulumi.automation import StackNotFoundError

    from clusterctl.lifecycle.workspace import open_stack

    try:
        return open_stack(project, stack, create=False)
    except StackNotFoundError:
        return None


# -- up ------------------------------------------------------------------------------------------


def _deployed_spec(handle) -> ClusterSpec | None:
    """The spec the stack's last update ran with (None: never deployed, or unreadable)."""
    from clusterctl.lifecycle.status import deployed_cluster
    from clusterctl.spec.load import load_spec

    info = handle.info()
    raw = deployed_cluster(info.config) if info is not None else None
    if raw is None or not handle.outputs():
        return None
    with suppress(UserError):
        return load_spec(raw)[0]
    return None


def _up(stack: str, as_json: bool, yes: bool, d: Deps, allow_replace: bool = False) -> None:
    from clusterctl.lifecycle.up import run_preview, run_up, save_kubeconfig
    from clusterctl.lifecycle.workspace import open_stack
    from clusterctl.spec.update_policy import diff, refusal

    project, spec = _context(stack)
    cost = _cost(spec)
    handle = open_stack(project, stack, create=True)
    before = _deployed_spec(handle)
    edits = diff(before, spec) if before is not None else []
    _show_edits(edits)
    refused = refusal(edits, allow_replace)
    if refused:
        raise UserError(refused)
    _check_capacity(spec, before, d)
    _check_role_permission(spec, before, d)
    with _operation():
        changes = run_preview(handle, err)
    _show_preview(stack, changes, _cost(before) if before else None, cost, spec)
    if edits or any(op != "same" for op in changes):
        _confirm_up(stack, yes, d)
    with _operation():
        outcome = run_up(handle, err)
    kubeconfig = save_kubeconfig(outcome, project.dir, stack)
    if as_json:
        doc = {
            "stack": stack,
            "outputs": outcome.public_outputs(),
            "changes": outcome.changes,
            "costPerHourUsd": cost.total,
            "validation": outcome.validation,
            "kubeconfigFile": None if kubeconfig is None else str(kubeconfig),
        }
        sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
        return
    table = Table(title=f"stack {stack} outputs")
    table.add_column("output")
    table.add_column("value", overflow="fold")
    for key, value in sorted(outcome.public_outputs().items()):
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        table.add_row(key, escape(text))
    out.print(table)
    out.print(
        f"[bold]cost: {usd(cost.total)} per hour, {usd(cost.per_day)} per day[/] (catalog"
        + (f"; no price for {', '.join(cost.unpriced)})" if cost.unpriced else ")")
    )
    if kubeconfig is not None:
        out.print(f"kubeconfig (0600): {kubeconfig}", highlight=False)
    if spec.validation.nccl.on_deploy:
        _show_validation(stack, outcome.validation)


def _check_capacity(spec: ClusterSpec, before: ClusterSpec | None, d: Deps) -> None:
    """Before anything is built: is each size offered here, and is there vCPU quota for what
    this `up` adds? Problems exit 2, one line each; an unanswerable cloud is said, not hidden."""
    from clusterctl.lifecycle.capacity import CapacityUnavailable, added, judge, needs
    from clusterctl.spec.catalog import catalog

    source = d.capacity(spec)
    if source is None:
        return
    cat = catalog()
    wanted = added(needs(spec, cat), needs(before, cat) if before else None)
    if before is not None and not any(n.vcpus for n in wanted):
        return  # nothing added: the deployed VMs already hold their quota
    sizes = ", ".join(sorted({n.sku for n in wanted}))
    err.print(f"asking Azure whether {spec.region} has {sizes} and the vCPU quota for them ...")
    try:
        skus, usages = source.fetch(spec.region)
    except CapacityUnavailable as exc:
        by_hand = f"az vm list-skus -l {spec.region} -o table; az vm list-usage -l {spec.region}"
        err.print(
            f"[yellow]not checked with Azure: {escape(str(exc))}. Check by hand: {by_hand}[/]",
            highlight=False,
        )
        return
    problems = judge(wanted, spec.region, skus, usages)
    if problems:
        raise UserError(problems)
    err.print(f"[green]Azure offers {sizes} in {spec.region} with quota for them[/]")


def _check_role_permission(spec: ClusterSpec, before: ClusterSpec | None, d: Deps) -> None:
    """A first Azure Slurm `up` makes the power role: does this sign-in hold the right to?"""
    from clusterctl.lifecycle.capacity import CapacityUnavailable
    from clusterctl.lifecycle.role_permission import NEEDED, judge

    source = d.capacity(spec)
    fetch = getattr(source, "permissions", None)
    if before is not None or not scheduler_of(spec.scheduler).power_saving or fetch is None:
        return
    err.print("asking Azure whether your sign-in may create the power role ...")
    try:
        sub, permissions = fetch()
    except CapacityUnavailable as exc:
        err.print(
            f"[yellow]not checked with Azure: {escape(str(exc))}. The power role needs "
            f"{' and '.join(NEEDED)} (Owner or User Access Administrator)[/]",
            highlight=False,
        )
        return
    problems = judge(permissions, sub)
    if problems:
        raise UserError(problems)


def _show_edits(edits) -> None:
    """What each edited field does to the deployed cluster, one line each."""
    if not edits:
        return
    err.print("edits to the deployed cluster:", highlight=False)
    for e in edits:
        kept = f"; kept: {e.keeps}" if e.keeps else ""
        err.print(
            f"  {e.path}: {e.policy} ({e.affects}): {e.detail}{kept}",
            highlight=False,
            soft_wrap=True,
        )


def _show_preview(stack: str, changes: dict[str, int], before, after, spec) -> None:
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.cost import idle_cost_per_hour

    what = ", ".join(f"{n} to {op}" for op, n in sorted(changes.items()) if op != "same")
    err.print(f"preview of stack {stack}: {what or 'no changes'}", highlight=False)
    was = "nothing deployed" if before is None else usd(before.total)
    idle = usd(idle_cost_per_hour(spec, catalog()))
    err.print(
        f"cost per hour (catalog, every node running): {was} -> {usd(after.total)}; "
        f"idle with power saving: {idle} ({spec.total_nodes} GPU nodes)",
        highlight=False,
    )


def _ask(yes: bool, d: Deps, refusal: str, question: str, declined: str) -> None:
    """Go on with --yes or a terminal's yes; without a terminal refuse (exit 2), on no exit 1."""
    if yes:
        return
    if not d.interactive():
        raise UserError(f"{refusal} without confirmation when not run from a terminal; pass --yes")
    if not typer.confirm(question, default=False):
        out.print(declined)
        raise typer.Exit(1)


def _confirm_up(stack: str, yes: bool, d: Deps) -> None:
    _ask(
        yes,
        d,
        f"up -s {stack}: refusing to change the cluster",
        f"Apply these changes to stack {stack}?",
        "nothing changed",
    )


def _show_validation(stack: str, result) -> None:
    if result is None:
        out.print(
            "[yellow]NCCL validation (onDeploy): did not run in this update[/] (it runs when the "
            f"GPU nodes are created); run `clusterctl validate --nccl -s {stack}`",
            highlight=False,
        )
        return
    colour = {"pass": "green", "warn": "yellow", "skipped": "yellow"}.get(result["verdict"], "red")
    out.print(
        f"NCCL validation (onDeploy): [{colour}]{result['verdict']}[/] {escape(result['message'])}",
        highlight=False,
    )


# -- status --------------------------------------------------------------------------------------


def _without_cli(project, stack: str) -> tuple[list, dict] | None:
    """Without the Pulumi CLI, a file:// backend's state is read directly: its resources and
    outputs (secrets masked); no last update (the CLI keeps that history). None: the CLI is
    there. Any other backend needs the CLI: its one-line error."""
    from clusterctl.lifecycle.stack_export import resources_of
    from clusterctl.lifecycle.workspace import find_cli

    try:
        find_cli()
        return None
    except UserError:
        files = project.checkpoint_files(stack)
        if not files:
            raise
    found = next((f for f in files if f.is_file()), None)
    if found is None:
        return [], {}
    try:
        doc = json.loads(found.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{found}: not a Pulumi state file ({exc}); `pulumi stack export` "
                        "shows what the CLI reads") from None  # fmt: skip
    deployment = doc.get("checkpoint", doc).get("latest") or {}
    root: dict = next((r for r in deployment.get("resources") or []
                 if r.get("type") == "pulumi:pulumi:Stack"), {})  # fmt: skip
    secret = "4dabf18193072939515e22adb298388d"  # Pulumi's marker of an encrypted value
    outputs = {k: ("[secret]" if isinstance(v, dict) and secret in v else v)
               for k, v in (root.get("outputs") or {}).items()}  # fmt: skip
    return resources_of(deployment), outputs


def _status(stack: str, as_json: bool, d: Deps) -> None:
    from clusterctl.lifecycle.status import build_status

    project, spec = _context(stack)
    local = _without_cli(project, stack)
    handle = _select(project, stack) if local is None else None
    resources, outputs = local if local is not None else ([], {})
    last = None
    if handle is not None:
        resources, outputs, last, spec = _read_handle(handle, spec)
    live = handle is not None and bool(resources)
    leak = d.down_billing(spec, outputs) if live else None
    report = build_status(stack, spec, _cost(spec), resources, last, outputs, d.now(), leak)
    if as_json:
        sys.stdout.write(json.dumps(report.as_json(), indent=2, default=str) + "\n")
        return
    if not report.deployed and report.kept:
        out.print(
            f"stack {stack}: down; nothing runs. Kept on purpose: {_names(report.kept)} "
            f"(billed as storage). To delete it too: clusterctl down -s {stack} --include-storage",
            highlight=False,
        )
        return
    if local is not None:
        err.print(
            f"[dim]read from the state in {project.local_state_dir()} (no Pulumi CLI here: "
            "last update unknown)[/]",
            highlight=False,
            soft_wrap=True,
        )
    if not report.deployed:
        out.print(f"stack {stack}: not deployed (nothing runs, nothing bills)")
        return
    _show_deployed(stack, report, last)


def _read_handle(handle, spec):
    """What the Pulumi CLI knows of the stack: its resources, its outputs, its last update and
    the spec it was deployed with (the size it was deployed with, not the file's)."""
    from clusterctl.lifecycle.stack_export import resources_of
    from clusterctl.lifecycle.status import LastUpdate, as_utc, deployed_cluster
    from clusterctl.spec.load import load_spec

    resources = resources_of(handle.export_stack().deployment)
    info = handle.info()
    last = None
    if info is not None:
        last = LastUpdate(info.kind, info.result, as_utc(info.start_time), as_utc(info.end_time))
        raw = deployed_cluster(info.config)
        if raw is not None:
            with suppress(UserError):
                spec = load_spec(raw)[0]
    outputs = {k: ("[secret]" if v.secret else v.value) for k, v in handle.outputs().items()}
    return resources, outputs, last, spec


def _show_deployed(stack: str, report, last) -> None:
    since = report.since.strftime("%Y-%m-%d %H:%M UTC") if report.since else "unknown"
    out.print(
        f"[bold]stack {stack}[/]: {report.cluster} ({report.cloud} {report.region}, "
        f"{report.scheduler}), {report.resources} cloud resources, up since {since}",
        highlight=False,
    )
    table = Table(title="nodes")
    for col in ("group", "sku", "nodes"):
        table.add_column(col)
    for g in report.groups:
        table.add_row(g.name, g.sku, str(g.nodes))
    out.print(table)
    if report.access:
        out.print(f"reach it: {escape(report.access)}", highlight=False)
    if report.egress:
        out.print(
            f"its nodes reach the Internet from {report.egress} (the NAT gateway's address: "
            "allow it in a registry's or a license server's firewall)",
            highlight=False,
        )
    if last is not None:
        out.print(f"last update: {last.kind} {last.result} at {last.ended or last.started}")
    out.print(
        f"[bold]spent so far: {usd(report.spent)}[/] ({report.hours:,.1f} h x "
        f"{usd(report.cost_per_hour, per='/h')} at catalog on-demand prices; disks and traffic "
        "extra)",
        highlight=False,
    )
    _show_down_billing(report)


def _show_down_billing(report) -> None:
    """Nodes DOWN with a VM that bills: no job can use them, yet each bills its full price."""
    if report.down_billing_unread:
        out.print(
            f"[yellow]DOWN nodes' VMs not checked:[/] {escape(report.down_billing_unread)}",
            highlight=False,
        )
        return
    record = report.down_billing
    if record is None:
        return
    checked = datetime.fromtimestamp(record["checkedAt"], UTC).strftime("%Y-%m-%d %H:%M UTC")
    if not record["nodes"]:
        out.print(f"no node is DOWN with its VM running (checked {checked})", highlight=False)
        return
    table = Table(title=f"[red]DOWN with the VM running: billing, unusable[/] (checked {checked})")
    for col in ("node", "vm", "power", "per hour", "deallocating", "reason"):
        table.add_column(col)
    for n in record["nodes"]:
        table.add_row(
            n["node"], n["vm"], n["power"], usd(n["usdPerHour"], per="/h"),
            "yes" if n["deallocateSent"] else "no (not set DOWN by the power program)",
            escape(n["reason"]),
        )  # fmt: skip
    out.print(table)
    out.print(
        f"[red]they bill {usd(report.down_billing_usd_per_hour, per='/h')}[/]; gpucl-power return "
        "deallocates the ones it set DOWN every 5 minutes; someone else set the others DOWN: "
        "bring each back (scontrol update NodeName=NODE State=RESUME) or deallocate its VM",
        highlight=False,
    )


# -- down ----------------------------------------------------------------------------------------


def _down(stack: str, yes: bool, include_storage: bool, d: Deps, as_json: bool = False) -> None:
    from clusterctl.lifecycle import down as ops
    from clusterctl.lifecycle.status import build_status

    say = err if as_json else out  # under --json stdout holds the document alone
    if as_json and not yes:
        bail(f"down -s {stack} --json: pass --yes too (with --json nothing is asked)")
    project, spec = _context(stack)
    handle = _select(project, stack)
    plan = None
    destroyed: list = []
    if handle is None:
        say.print(f"stack {stack}: no such stack in the backend; nothing to destroy")
    else:
        resources = ops.export(handle)
        plan = ops.plan_down(resources, include_storage)
        if not plan.destroy and not plan.unprotect:
            say.print(f"stack {stack}: nothing to destroy")
        else:
            report = build_status(stack, spec, _cost(spec), resources, None, {}, d.now())
            _show_plan(stack, plan, report, say)
            _confirm(stack, yes, len(plan.destroy), d)
            with _operation():
                ops.refresh(handle, err)
                plan = ops.plan_down(ops.export(handle), include_storage)
                if plan.unprotect:
                    err.print(f"lifting protection of {_names(plan.unprotect)}", highlight=False)
                    ops.unprotect(handle, [r.urn for r in plan.unprotect])
                ops.destroy(handle, err, d.backoff, plan.exclude_protected, _retry_note)
            destroyed = list(plan.destroy)
    left: list = []
    if handle is not None and plan is not None:
        left = ops.leftovers(ops.export(handle), plan)
        if left:
            say.print(f"[red]the stack still holds {len(left)} resources:[/]")
            for r in left:
                say.print(f"  {r.type} {r.name} {r.id or ''}", highlight=False)
        else:
            say.print(
                f"[green]stack {stack} is empty[/]"
                + (" but for what it keeps" if plan.keep else "")
            )
    survived, checked = _check_cloud(stack, spec, plan, d, say)
    kept = list(plan.keep) if plan is not None else []
    if kept:
        say.print(
            f"kept on purpose: {_names(kept)}. To delete it too: "
            f"clusterctl down -s {stack} --include-storage",
            highlight=False,
        )
    failed = bool(left or survived)
    if as_json:
        doc = {
            "stack": stack,
            "destroyed": [r.as_json() for r in destroyed],
            "kept": [r.as_json() for r in kept],
            "left": [r.as_json() for r in left],
            "survivors": [r.as_json() for r in survived],
            "cloudChecked": checked,
            "exit_code": 1 if failed else 0,
        }
        sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
    if failed:
        raise typer.Exit(1)


def _names(resources) -> str:
    return escape(", ".join(f"{r.name} ({r.type})" for r in resources))


def _retry_note(cause: str, delay: float, attempt: int) -> None:
    err.print(
        f"[yellow]destroy attempt {attempt} hit {cause} (a dependency the cloud is still "
        f"releasing); retrying in {delay:g}s[/]",
        highlight=False,
    )


def _show_plan(stack: str, plan, report, say=out) -> None:
    table = Table(title=f"stack {stack}: will be destroyed")
    table.add_column("type")
    table.add_column("name")
    for r in plan.destroy:
        table.add_row(r.type, r.name)
    say.print(table)
    if plan.keep:
        say.print(f"[yellow]kept[/] (protected storage and what it needs): {_names(plan.keep)}")
    if plan.unprotect:
        gone = _names(plan.unprotect)
        say.print(f"[red]--include-storage: the shared storage is deleted too: {gone}[/]")
    since = report.since.strftime("%Y-%m-%d %H:%M UTC") if report.since else "an unknown time"
    say.print(
        f"running since {since}: {usd(report.spent)} so far at "
        f"{usd(report.cost_per_hour, per='/h')} (catalog on-demand prices)",
        highlight=False,
    )


def _confirm(stack: str, yes: bool, count: int, d: Deps) -> None:
    _ask(
        yes,
        d,
        f"down -s {stack}: refusing to destroy",
        f"Destroy {count} resources of stack {stack}?",
        "nothing destroyed",
    )


def _check_cloud(stack: str, spec: ClusterSpec, plan, d: Deps, say=out) -> tuple[list, bool]:
    """Ask the cloud for resources still tagged with the stack: (the survivors, whether the cloud
    could be asked)."""
    from clusterctl.lifecycle.survivors import CheckUnavailable, survivors

    finder = d.finder(spec)
    try:
        found = finder.tagged(stack)
    except CheckUnavailable as exc:
        by_hand = finder.description.replace("<stack>", stack)
        say.print(
            f"[yellow]not checked with the cloud: {escape(str(exc))}. Check by hand: {by_hand}[/]",
            highlight=False,
        )
        return [], False
    kept_ids = [r.id for r in plan.keep if r.id] if plan is not None else []
    left = survivors(found, kept_ids)
    if not left:
        say.print(f"[green]the cloud has no other resource tagged gpu-clusters:stack={stack}[/]")
        return [], True
    say.print(f"[red]{len(left)} resources tagged gpu-clusters:stack={stack} survived:[/]")
    for r in left:
        say.print(f"  {r.type} {r.name} {r.id}", highlight=False, soft_wrap=True)
    return left, True
