"""`clusterctl plan`, `catalog` and `schema`: what a stack would build, offline."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from clusterctl.cli.common import StackOpt, bail, err, out
from clusterctl.cli.paths import writable_dir, writable_file
from clusterctl.figures import usd
from clusterctl.platform import nat_egress, scheduler_of


def register(app: typer.Typer) -> None:
    app.command()(plan)
    app.command("catalog")(catalog_cmd)
    app.command()(schema)


def plan(
    stack: StackOpt,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="FIELD=VALUE",
            help="Override a field: --set partitions[0].nodes=64 (repeatable).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Write every rendered file and plan.json into this folder."),
    ] = None,
) -> None:
    """Show what `pulumi up -s STACK` would build, offline: no cloud account, no Pulumi CLI.

    Runs the real Pulumi program under Pulumi's mock engine, prints the resource tree, the
    estimated cost and the findings; exits 2 on a config error.
    """
    from clusterctl.plan.program import make_plan, write_plan

    if out_dir is not None:
        writable_dir(out_dir, "--out")
    result = make_plan(stack, set_ or [])
    if out_dir is not None:
        written = write_plan(result, out_dir)
        removed, foreign = _tidy_out(out_dir, written)
        if not as_json:
            out.print(f"wrote {len(written)} files to {out_dir}")
            for rel in removed:
                out.print(f"removed {rel}: an earlier plan wrote it, this one does not")
        for rel in foreign:
            err.print(
                f"warning: {out_dir / rel} is not from this plan (left as is); "
                "use an empty --out folder to keep plans apart"
            )
    if as_json:
        sys.stdout.write(json.dumps(result.as_json(), indent=2, default=str) + "\n")
        return
    _print_plan(result)


MANIFEST = ".clusterctl-plan-files"
"""The files the last `plan --out` wrote into its folder, one relative path a line."""


def _tidy_out(out_dir: Path, written: list[Path]) -> tuple[list[str], list[str]]:
    """Remove the files an earlier plan wrote here that this plan no longer produces; name the
    files no plan wrote (never deleted: they may be the user's). Records this plan's files."""
    now = sorted(str(p.relative_to(out_dir)) for p in written)
    manifest = out_dir / MANIFEST
    before = set(manifest.read_text().split("\n")) - {""} if manifest.is_file() else set()
    removed = []
    for rel in sorted(before - set(now)):
        path = out_dir / rel
        inside = path.resolve().is_relative_to(out_dir.resolve())  # an edited list: never outside
        if inside and path.is_file() and not path.is_symlink():
            path.unlink()
            removed.append(rel)
    for folder in sorted({(out_dir / r).parent for r in removed}, reverse=True):
        while folder != out_dir and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
    manifest.write_text("".join(f"{rel}\n" for rel in now))
    keep = set(now) | {MANIFEST}
    foreign = sorted(
        str(p.relative_to(out_dir))
        for p in out_dir.rglob("*")
        if (p.is_file() or p.is_symlink()) and str(p.relative_to(out_dir)) not in keep
    )
    return removed, foreign


def _print_plan(result) -> None:
    run = result.run
    _print_tree(result.stack, run.resources)
    counts = Counter(r.type for r in run.resources if r.custom)
    table = Table(title="resources by type", show_header=True)
    table.add_column("type")
    table.add_column("count", justify="right")
    for type_, n in sorted(counts.items()):
        table.add_row(type_, str(n))
    out.print(table)
    _print_roles(run.resources)
    _print_team(result.spec)
    _print_cost(result.cost)
    _print_idle_cost(result.spec)
    if scheduler_of(result.spec.scheduler).power_saving:
        _print_largest_jobs(result.spec)
        _print_image_cache(result.spec)
    _print_shared_gpus(result.spec)
    for f in result.findings:
        colour = {"warning": "yellow", "info": "cyan"}.get(f.level, "red")
        out.print(f"[{colour}]{f.level}[/]: {f.line()}")


def _print_tree(stack: str, resources) -> None:
    """The resources as Pulumi parents them, each with the name Azure shows when it differs."""
    from clusterctl.plan.mockengine import azure_name

    children: dict[str | None, list] = {}
    for res in resources:
        children.setdefault(res.parent_urn, []).append(res)
    tree = Tree(f"[bold]stack {stack}[/] ({len(resources)} resources)")

    def add(node: Tree, parent: str | None) -> None:
        for res in children.get(parent, []):
            label = f"{res.name} [dim]{res.type}[/]"
            real = azure_name(res.type, res.name, res.inputs)
            if real != res.name:  # the logical name is Pulumi's; Azure shows this one
                label += f" [dim]named[/] {escape(real)}"
            if res.protect:
                label += " [yellow](protected)[/]"
            add(node.add(label), res.urn)

    urns = {r.urn for r in resources}
    roots = dict.fromkeys(r.parent_urn for r in resources if r.parent_urn not in urns)
    for root in roots:  # resources come in tree order (mockengine.in_tree_order): so do roots
        add(tree, root)
    out.print(tree)


def _print_cost(cost) -> None:
    """One line per priced item, then the hourly total (or why there is none)."""
    for line in cost.lines:
        out.print(_cost_line(line))
    if cost.total is None:
        out.print(
            f"[bold]estimated cost: [yellow]unknown[/][/] per hour: no catalog price for "
            f"{', '.join(cost.unpriced)}; the priced rest is {usd(cost.priced_part, per='/h')} "
            "(on-demand compute and hourly services; disks and traffic extra)"
        )
    else:
        out.print(
            f"[bold]estimated cost: {usd(cost.total)} per hour, {usd(cost.per_day)} per day[/] "
            "(on-demand compute and hourly services at catalog prices; disks and traffic extra)"
        )


def _cost_line(line) -> str:
    """An item with no price, an hourly service (plus its traffic price), or count x SKU."""
    note = f" [yellow]({escape(line.note)})[/]" if line.note else ""
    if line.usd_per_hour_each is None:
        return (
            f"  {line.item}: {line.count} x {line.sku}: [yellow]price unknown[/] (the "
            "catalog has no published on-demand price)"
        )
    if line.service:
        per_gb = line.usd_per_gb_processed
        traffic = f" + ${per_gb:,.3f} per GB it carries" if per_gb else ""
        return (
            f"  {line.item}: ${line.usd_per_hour_each:,.3f}/h{traffic} "
            f"[dim](catalog price of {line.price_as_of})[/]{note}"
        )
    return (
        f"  {line.item}: {line.count} x {line.sku} at ${line.usd_per_hour_each:,.2f}/h "
        f"= {usd(line.usd_per_hour, per='/h')} [dim](catalog price of "
        f"{line.price_as_of})[/]{note}"
    )


def _print_idle_cost(spec) -> None:
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.cost import idle_cost_per_hour
    from clusterctl.spec.kubernetes import AUTOSCALER_IDLE_MINUTES, NODE_PROVISION_MINUTES

    idle = usd(idle_cost_per_hour(spec, catalog()))
    if scheduler_of(spec.scheduler).power_saving:
        out.print(
            f"idle, with Slurm power saving: {idle} per hour (head node, hourly services "
            "and minNodes; "
            "idle GPU nodes are deallocated after idleMinutes)"
        )
    else:
        out.print(
            f"idle, with the cluster autoscaler: {idle} per hour (system nodes, hourly "
            "services and minNodes; a GPU node is removed "
            f"{AUTOSCALER_IDLE_MINUTES} minutes after its last GPU pod, and takes up to "
            f"{NODE_PROVISION_MINUTES} minutes to come back)"
        )


def _print_largest_jobs(spec) -> None:
    """One scale set is one InfiniBand fabric and slurm.conf's MaxNodes: a larger job is refused
    at submission (render/slurm_conf.job_node_limits: with NVLink blocks, the largest block
    level too)."""
    from clusterctl.render.slurm_conf import job_node_limits
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.topology import scale_sets_of

    limits = job_node_limits(spec, catalog())
    for part in spec.partitions:
        sets = scale_sets_of(part.name, part.nodes, part.max_nodes_per_scale_set)
        most = limits[part.name]
        out.print(
            f"partition {part.name}: the largest job is {most} node(s), one of its "
            f"{len(sets)} scale set(s) (one InfiniBand fabric each); a larger one is refused "
            "at submission"
        )


IMAGE_GB = 20
"""About what an NGC PyTorch image's layers weigh: the example the image-cache line prices."""


def _print_image_cache(spec) -> None:
    """What a container image costs a node that power saving deallocated: enroot's layer cache is
    on the OS disk (render/paths.ENROOT_CACHE, docs/decisions/0009), so nothing on a resume."""
    from clusterctl.render.paths import ENROOT_CACHE, ENROOT_CACHE_GIB
    from clusterctl.spec.catalog import catalog

    nat = catalog().services.get(spec.cloud, {}).get("natGateway")
    per_gb = nat.usd_per_gb_processed if nat and nat_egress(spec.cloud, spec.scheduler) else None
    first = f" (${IMAGE_GB * per_gb:,.2f} through the NAT gateway)" if per_gb else ""
    out.print(
        f"container images: a GPU node pulls an image once, into enroot's layer cache on its OS "
        f"disk ({ENROOT_CACHE}, kept to {ENROOT_CACHE_GIB} GiB), about {IMAGE_GB} GB for NGC "
        f"PyTorch{first} and minutes; a node resumed from power saving downloads nothing and "
        "spends its start unpacking the cached layers"
    )


def _print_shared_gpus(spec) -> None:
    """Per partition with `sharing`: the slices or shards it offers and a slice-hour's cost."""
    from clusterctl.platform import scheduler_of
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.cost import shared_gpu_offers

    group = scheduler_of(spec.scheduler).node_group
    for o in shared_gpu_offers(spec, catalog()):
        price = (
            f"${o.usd_per_hour_each:,.3f} per slice-hour"
            if o.usd_per_hour_each is not None
            else "[yellow]price unknown[/]"
        )
        out.print(
            f"{group} {o.partition}: {o.total} x {o.gres} ({o.per_node} per node; "
            f"{o.request}), {price} [dim](the node's price per GPU, times the slice's "
            "share of it)[/]",
            markup=True,
            highlight=False,
        )


def _print_team(spec) -> None:
    """Who may use the cluster, in which account, and the limits they meet."""
    if not (spec.users or spec.accounts):
        return
    table = Table(title="team (Slurm associations)", show_header=True)
    for col in ("account", "fair share", "GPU limit", "QoS (default first)", "users"):
        table.add_column(col)
    for account in spec.accounts:
        users = [
            f"{u.name} ({u.uid}{', admin' if u.admin else ''})"
            for u in spec.users
            if u.account == account.name
        ]
        table.add_row(
            account.name,
            str(account.fairshare),
            str(account.gpu_limit) if account.gpu_limit else "none",
            ", ".join(account.qos),
            ", ".join(users) or "-",
        )
    out.print(table)
    qos = Table(title="QoS", show_header=True)
    for col in ("name", "priority", "max wall", "max GPUs per user"):
        qos.add_column(col)
    for q in spec.qos:
        wall = f"{q.max_wall_minutes} min" if q.max_wall_minutes else "none"
        qos.add_row(q.name, str(q.priority), wall, str(q.max_gpus_per_user or "none"))
    out.print(qos)


def _print_roles(resources) -> None:
    """Custom roles and where they are assigned: what the cluster's identities may do."""
    roles = [r for r in resources if r.type == "azure-native:authorization:RoleDefinition"]
    assigned = [r for r in resources if r.type == "azure-native:authorization:RoleAssignment"]
    for role in roles:
        name = role.inputs.get("roleName", role.name)
        out.print(f"role [bold]{escape(name)}[/] (custom) may:", highlight=False)
        for perm in role.inputs.get("permissions", []):
            for action in perm.get("actions", []):
                out.print(f"  {action}", highlight=False)
        scopes = [
            a.inputs.get("scope", "?")
            for a in assigned
            if str(a.inputs.get("roleDefinitionId", "")).endswith(f"/{role.name}")
        ]
        out.print(f"  assigned on {len(scopes)} scope(s):", highlight=False)
        for scope in scopes:
            out.print(f"  {escape(scope)}", highlight=False, soft_wrap=True)


def catalog_cmd(
    cloud: Annotated[str | None, typer.Option(help="Only this cloud: azure or aws.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
) -> None:
    """List the SKU catalog: GPUs, fabric, NCCL baselines and prices, each with its source."""
    from typing import get_args

    from clusterctl.spec.catalog import Sku, catalog

    clouds = get_args(Sku.model_fields["cloud"].annotation)
    if cloud is not None and cloud not in clouds:
        bail(f"--cloud {cloud}: not a cloud clusterctl knows; use one of {', '.join(clouds)}")
    cat = catalog()
    skus = [s for s in cat.skus if cloud is None or s.cloud == cloud]
    if as_json:
        sys.stdout.write(
            json.dumps([s.model_dump(by_alias=True) for s in skus], indent=2, default=str) + "\n"
        )
        return
    table = Table(title="SKU catalog")
    # A narrow terminal wraps cells, never cuts them: a cut SKU name cannot be typed back.
    width = max((len(s.name) for s in skus), default=4)
    table.add_column("type", no_wrap=True, min_width=width)
    for col in ("cloud", "GPUs", "fabric", "busbw 1 node", "busbw 2+ nodes", "$/hour"):
        table.add_column(col, overflow="fold")
    for s in skus:
        fabric = (
            f"{s.fabric.kind} {s.fabric.nics}x{s.fabric.gbps_per_nic:g}G"
            if s.fabric.kind != "none" and s.fabric.gbps_per_nic
            else s.fabric.kind
        )
        table.add_row(
            s.name,
            s.cloud,
            f"{s.gpus}x {s.gpu_model} {s.gpu_memory_gi_b}GB" if s.gpus else "-",
            fabric,
            _baseline(s.baseline(1)) if s.gpus else "-",
            _baseline(s.baseline(2)) if s.gpus else "-",
            (f"{s.price.usd_per_hour:,.2f}" if s.price.usd_per_hour else "n/a")
            + f" ({s.price.region}, {s.price.as_of})",
        )
    out.print(table)


def _baseline(b) -> str:
    if b is None or b.fail_below_gbps is None:
        return "n/a"
    return f">= {b.fail_below_gbps:g} GB/s"


def schema(
    out_file: Annotated[
        Path | None,
        typer.Option("--out", help="Write the JSON Schema to this file instead of stdout."),
    ] = None,
) -> None:
    """Print the JSON Schema of a stack file (its `gpu-clusters:cluster` object checked), for
    editors: a stack's first line `# yaml-language-server: $schema=<path>` applies it.

    `clusterctl schema --out config/stack.schema.json` refreshes the copy in the checkout.
    """
    from clusterctl.spec.schema import stack_schema

    if out_file is not None:
        writable_file(out_file, "--out")
    text = json.dumps(stack_schema(), indent=2) + "\n"
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text)
    err.print(f"wrote {out_file}", highlight=False)
