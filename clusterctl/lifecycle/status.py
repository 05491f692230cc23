"""`clusterctl status`: what runs, since when, how many nodes, what it cost so far.

Pure: the CLI gathers the stack's state, last update and outputs, this turns them into a report.
"Spent" is an estimate at catalog on-demand prices: the current size times the hours since the
stack's first cloud resource was created (disks, traffic and discounts not included).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clusterctl import outputs as out
from clusterctl.lifecycle.stack_export import (
    StateResource,
    cloud_resources,
    compute_since,
    kept_by_protection,
)
from clusterctl.platform import scheduler_of
from clusterctl.power.down_billing import DownBillingRecord, hourly
from clusterctl.spec.cost import Cost
from clusterctl.spec.defaults import head_sku
from clusterctl.spec.model import CONFIG_KEY, ClusterSpec


@dataclass(frozen=True)
class NodeGroup:
    name: str
    sku: str
    nodes: int


@dataclass(frozen=True)
class LastUpdate:
    kind: str
    result: str
    started: datetime | None
    ended: datetime | None


@dataclass(frozen=True)
class Status:
    stack: str
    deployed: bool
    cluster: str
    cloud: str
    region: str
    scheduler: str
    groups: tuple[NodeGroup, ...]
    resources: int
    since: datetime | None
    last_update: LastUpdate | None
    cost_per_hour: float | None
    """None: a type the cluster runs has no catalog price (unknown, never 0)."""
    now: datetime
    outputs: dict[str, Any]
    access: str | None = None
    """How to reach the cluster, from the outputs READS["status"] declares."""
    egress: str | None = None
    """The one public address the nodes reach the Internet from (the NAT gateway's)."""
    kept: tuple[StateResource, ...] = ()
    """What `down` kept on purpose (protected storage and what it needs) while nothing else
    runs: the cluster is down, and these bill as storage, not at the cluster's rate."""
    down_billing: DownBillingRecord | None = None
    """The nodes Slurm holds DOWN whose VM still bills, as the scheduler's `gpucl-power return`
    last found them (power/down_billing.py); None when it could not be read."""
    down_billing_unread: str | None = None
    """Why that record could not be read (the scheduler unreachable, no check yet); None: read,
    or not a cluster that keeps one."""

    @property
    def down_billing_usd_per_hour(self) -> float | None:
        return hourly(self.down_billing) if self.down_billing else None

    @property
    def hours(self) -> float:
        if not self.deployed or self.since is None:
            return 0.0
        return max(0.0, (self.now - self.since).total_seconds() / 3600)

    @property
    def spent(self) -> float | None:
        if self.cost_per_hour is None:
            return None if self.hours else 0.0
        return round(self.hours * self.cost_per_hour, 2)

    def as_json(self) -> dict[str, Any]:
        last = self.last_update
        return {
            "stack": self.stack,
            "deployed": self.deployed,
            "cluster": self.cluster,
            "cloud": self.cloud,
            "region": self.region,
            "scheduler": self.scheduler,
            "nodeGroups": [g.__dict__ for g in self.groups],
            "resources": self.resources,
            "since": _iso(self.since),
            "hours": round(self.hours, 2),
            "costPerHourUsd": self.cost_per_hour,
            "spentUsd": self.spent,
            "lastUpdate": None
            if last is None
            else {
                "kind": last.kind,
                "result": last.result,
                "started": _iso(last.started),
                "ended": _iso(last.ended),
            },
            "outputs": self.outputs,
            "access": self.access,
            "egressAddress": self.egress,
            "kept": [r.as_json() for r in self.kept],
            "downVmRunning": None
            if self.down_billing is None
            else {
                "checkedAt": _iso(datetime.fromtimestamp(self.down_billing["checkedAt"], UTC)),
                "nodes": self.down_billing["nodes"],
                "usdPerHour": self.down_billing_usd_per_hour,
            },
            "downVmRunningUnread": self.down_billing_unread,
        }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def as_utc(value: datetime | None) -> datetime | None:
    """The SDK parses history times as naive datetimes that are in UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def deployed_cluster(config: dict[str, Any] | None) -> Any | None:
    """The cluster object the last update ran with (history keeps the config it used)."""
    value = (config or {}).get(CONFIG_KEY)
    raw = getattr(value, "value", value)
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return None
    return raw if isinstance(raw, dict) else None


def access(outputs: dict[str, Any]) -> str | None:
    got = out.reader("status", outputs)
    if got.kind == out.SLURM:
        command = got.get(out.SSH_COMMAND)
        logins = got.get(out.LOGIN_ADDRESSES) or []
        team = "; ".join(f"the team: ssh <user>@{a}" for a in logins)
        if command and team:
            return f"{command} (the admin, on the scheduler); {team}"
        return str(command) if command else None
    version = got.get(out.KUBERNETES_VERSION)
    return (
        f"kubectl (Kubernetes {version}) with the kubeconfig `clusterctl up` wrote"
        if version
        else None
    )


def egress(outputs: dict[str, Any]) -> str | None:
    got = out.reader("status", outputs)
    address = got.get(out.EGRESS_ADDRESS) if got.kind == out.SLURM else None
    return str(address) if address else None


def scheduler_login(outputs: dict[str, Any]) -> tuple[str, str | None] | None:
    """(address, admin user) of a Slurm cluster's scheduler from its outputs; None for a
    cluster without one (Kubernetes) or one that has not written it."""
    got = out.reader("status", outputs)
    if got.kind != out.SLURM or not got.get(out.SCHEDULER_ADDRESS):
        return None
    user = got.get(out.ADMIN_USER)
    return str(got.get(out.SCHEDULER_ADDRESS)), str(user) if user else None


def node_groups(spec: ClusterSpec) -> tuple[NodeGroup, ...]:
    scheduler = scheduler_of(spec.scheduler)
    head = scheduler.head_role
    head_nodes = 1 if scheduler.head_node else spec.kubernetes.system_nodes
    return (
        NodeGroup(head, head_sku(spec), head_nodes),
        *(NodeGroup(p.name, p.sku, p.nodes) for p in spec.partitions),
    )


def build_status(
    stack: str,
    spec: ClusterSpec,
    cost: Cost,
    resources: list[StateResource],
    last_update: LastUpdate | None,
    outputs: dict[str, Any],
    now: datetime,
    down_billing: DownBillingRecord | str | None = None,
) -> Status:
    """`down_billing`: the scheduler's record of DOWN nodes whose VM bills, or why it could not
    be read (a str), or None where there is none to read."""
    everything = cloud_resources(resources)
    protected = {r.urn for r in kept_by_protection(resources)}
    # after `down` only the protected storage (and its resource group) is left: not a cluster
    running = any(r.urn not in protected for r in everything)
    live = everything if running else []
    kept = [] if running else everything
    since = compute_since(resources) if running else None
    if since is None and live and last_update is not None:
        since = last_update.started  # older CLIs do not record creation times in state
    return Status(
        stack=stack,
        deployed=bool(live),
        cluster=spec.name,
        cloud=spec.cloud,
        region=spec.region,
        scheduler=spec.scheduler,
        groups=node_groups(spec),
        resources=len(live),
        since=since,
        last_update=last_update,
        cost_per_hour=cost.total if live else 0.0,
        now=now,
        outputs=outputs,
        access=access(outputs) if live else None,
        egress=egress(outputs) if live else None,
        kept=tuple(kept),
        down_billing=None if isinstance(down_billing, str) or not live else down_billing,
        down_billing_unread=down_billing if isinstance(down_billing, str) and live else None,
    )
