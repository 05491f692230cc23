"""What `up` asks the cloud before it builds anything: is each VM size offered to this subscription
in the region (and its zones), and does the vCPU quota cover the nodes? Only the cloud knows,
so `plan` says it did not check (spec.rules.cloud_only_checks) and `up` asks first (Azure:
Resource SKUs and Usage, tests/data/azure-rest/SOURCES.md).

Pure: the answers come in as the REST shapes (ResourceSku, Usage); the fetching is
capacity_azure.py. A stack already deployed needs only what it adds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from clusterctl.platform import scheduler_of
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.defaults import head_sku
from clusterctl.spec.model import ClusterSpec, field_path

TOTAL = "cores"
"""Usage name of the regional vCPU total every regular VM counts against."""
SPOT = "lowPriorityCores"
"""Usage name of the regional Spot vCPU quota (Spot VMs count here, not in their family)."""


class CapacityUnavailable(RuntimeError):
    """The cloud could not be asked (no SDK, no credentials, no subscription): say so, go on."""


class CapacitySource(Protocol):
    def fetch(self, region: str) -> tuple[list[dict], list[dict]]:
        """(ResourceSku, Usage) documents for the region; CapacityUnavailable if it cannot."""
        ...


@dataclass(frozen=True)
class Need:
    field: str
    sku: str
    vcpus: int
    spot: bool
    zones: tuple[str, ...] = ()


def needs(spec: ClusterSpec, cat: Catalog) -> list[Need]:
    """The VMs of the stack, by the field that asks for them (Azure Slurm and AKS alike)."""
    out: list[Need] = []
    if scheduler_of(spec.scheduler).head_node:
        head = head_sku(spec)
        sku = cat.get(head, spec.cloud)
        out.append(Need(field_path("headNode", "sku"), head, sku.vcpus if sku else 0, False))
    for i, p in enumerate(spec.partitions):
        sku = cat.get(p.sku, spec.cloud)
        vcpus = (sku.vcpus if sku else 0) * p.nodes
        out.append(Need(field_path("partitions", i, "sku"), p.sku, vcpus, p.spot, tuple(p.zones)))
    return out


def added(now: list[Need], before: list[Need] | None) -> list[Need]:
    """What an update adds over what is deployed (vCPUs per field and size; never below 0)."""
    if not before:
        return now
    had: dict[tuple[str, str, bool], int] = defaultdict(int)
    for n in before:
        had[(n.field, n.sku, n.spot)] += n.vcpus
    return [
        Need(n.field, n.sku, max(0, n.vcpus - had[(n.field, n.sku, n.spot)]), n.spot, n.zones)
        for n in now
    ]


def judge(wanted: Iterable[Need], region: str, skus: list[dict], usages: list[dict]) -> list[str]:
    """One line per problem, naming the field and the fix; [] when the cloud has room."""
    problems: list[str] = []
    by_name = {s.get("name"): s for s in skus if s.get("resourceType") == "virtualMachines"}
    quota = {(u.get("name") or {}).get("value"): u for u in usages}
    per_quota: dict[str, list[Need]] = defaultdict(list)
    for need in wanted:
        sku = by_name.get(need.sku)
        if sku is None or region not in [loc.lower() for loc in sku.get("locations", [])]:
            problems.append(
                f"{need.field}: {need.sku} is not offered in {region}; pick a region that has "
                f"it (az vm list-skus -l REGION --size {need.sku})"
            )
            continue
        problems += _restrictions(need, sku, region)
        if need.vcpus:
            per_quota[SPOT if need.spot else sku.get("family", "")].append(need)
            if not need.spot:
                per_quota[TOTAL].append(need)
    for name, group in per_quota.items():
        problems += _quota(name, group, quota.get(name), region)
    return problems


def _restrictions(need: Need, sku: dict, region: str) -> list[str]:
    out = []
    for r in sku.get("restrictions") or []:
        info = r.get("restrictionInfo") or {}
        if r.get("type") == "Location" and region in [v.lower() for v in r.get("values", [])]:
            out.append(
                f"{need.field}: {need.sku} is restricted for your subscription in {region} "
                f"({r.get('reasonCode', 'restricted')}); request access (Azure support: "
                "'Region or SKU access') or pick another region"
            )
        elif r.get("type") == "Zone" and need.zones:
            blocked = sorted(set(need.zones) & set(info.get("zones") or []))
            if blocked:
                out.append(
                    f"{need.field}: {need.sku} is restricted in zone(s) {', '.join(blocked)} of "
                    f"{region} ({r.get('reasonCode', 'restricted')}); list other zones"
                )
    return out


def _quota(name: str, group: list[Need], usage: dict | None, region: str) -> list[str]:
    want = sum(n.vcpus for n in group)
    fields = ", ".join(sorted({n.field for n in group}))
    what = {TOTAL: "the regional vCPU total", SPOT: "the Spot vCPU quota"}.get(
        name, "the family's vCPU quota"
    )
    if usage is None:
        return [
            f"{fields}: {what} ({name}) is not listed for {region}; ask for quota before "
            "`up` (portal: Quotas > Compute)"
        ]
    free = int(usage.get("limit", 0)) - int(usage.get("currentValue", 0))
    if want <= free:
        return []
    return [
        f"{fields}: {want} vCPUs needed in {region}, {what} ({name}) has {free} free "
        f"(limit {usage.get('limit')}, {usage.get('currentValue')} in use); request an increase "
        "(portal: Quotas > Compute) or lower the node count"
    ]
