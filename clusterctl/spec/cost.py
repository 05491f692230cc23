"""What a cluster costs per hour at catalog prices: a pure function of the spec."""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.platform import cloud_of, nat_egress, scheduler_of
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.defaults import JUMP_HOST_SKU, head_sku, login_count, login_sku
from clusterctl.spec.kubernetes import autoscaled_min
from clusterctl.spec.lustre import FSX_PRICE_KEY, HOURS_PER_MONTH, shared_filesystem
from clusterctl.spec.model import ClusterSpec


@dataclass(frozen=True)
class CostLine:
    item: str
    sku: str
    count: int
    usd_per_hour_each: float | None
    price_as_of: str
    """When the catalog's price was read (config/skus.yaml names the source)."""
    service: bool = False
    """Not a VM: a service billed by the hour (config/services.yaml)."""
    usd_per_gb_processed: float | None = None

    @property
    def usd_per_hour(self) -> float:
        return self.count * (self.usd_per_hour_each or 0.0)


@dataclass(frozen=True)
class Cost:
    lines: tuple[CostLine, ...]

    @property
    def total(self) -> float:
        return round(sum(line.usd_per_hour for line in self.lines), 2)

    @property
    def unpriced(self) -> list[str]:
        """Items whose type has no published on-demand price: the total leaves them out."""
        return [line.item for line in self.lines if line.usd_per_hour_each is None]

    @property
    def per_day(self) -> float:
        return round(self.total * 24, 2)


def cost_per_hour(spec: ClusterSpec, cat: Catalog) -> Cost:
    """On-demand compute and the NAT gateway's hours (no disks, traffic or spot discounts): an
    upper bound to plan with."""
    lines = []
    if scheduler_of(spec.scheduler).head_node:
        lines.append(_line(cat, "head node", head_sku(spec), 1))
        if spec.ssh.access == "jumphost":
            lines.append(_line(cat, "jump host", JUMP_HOST_SKU, 1))
        if login_count(spec):
            lines.append(_line(cat, "login nodes", login_sku(spec), login_count(spec)))
    else:
        lines.append(_line(cat, "system nodes", head_sku(spec), spec.kubernetes.system_nodes))
        # what the cluster itself bills, idle or not (EKS's control plane, AKS's load balancer)
        lines += [
            _service(cat, spec.cloud, key) for key in cloud_of(spec.cloud).kubernetes_services
        ]
    for part in spec.partitions:
        lines.append(_line(cat, f"partition {part.name}", part.sku, part.nodes))
    if nat_egress(spec.cloud, spec.scheduler):
        lines += [_service(cat, spec.cloud, key) for key in ("natGateway", "publicIp")]
    fs = shared_filesystem(spec)
    if fs is not None:
        lines.append(_file_system(cat, spec.cloud, fs.size_gib, fs.throughput_mbps_per_tib))
    return Cost(tuple(line for line in lines if line))


def _service(cat: Catalog, cloud: str, key: str) -> CostLine:
    """A non-VM line; a service missing from config/services.yaml is an unpriced line."""
    price = cat.services.get(cloud, {}).get(key)
    if price is None:
        return CostLine(key, key, 1, None, "", service=True)
    return CostLine(
        price.title,
        key,
        1,
        price.usd_per_hour,
        price.as_of,
        service=True,
        usd_per_gb_processed=price.usd_per_gb_processed,
    )


def _file_system(cat: Catalog, cloud: str, size_gib: int, throughput: int) -> CostLine:
    """The shared file system: its provisioned GB (1 GiB billed as 1 GB, as the price pages
    quote) at the tier's per-GB-month price, per hour of a 730-hour month."""
    shape = f"{size_gib} GiB at {throughput} MB/s/TiB"
    price = cat.services.get(cloud, {}).get(FSX_PRICE_KEY.format(throughput=throughput))
    if price is None or price.usd_per_gb_month is None:
        return CostLine("shared file system (FSx for Lustre)", shape, 1, None, "", service=True)
    hourly = round(size_gib * price.usd_per_gb_month / HOURS_PER_MONTH, 4)
    return CostLine(f"{price.title}, {shape}", shape, 1, hourly, price.as_of, service=True)


def _line(cat: Catalog, item: str, sku_name: str, count: int) -> CostLine | None:
    sku = cat.get(sku_name)
    if sku is None:
        return None
    return CostLine(item, sku.name, count, sku.price.usd_per_hour, sku.price.as_of)


def idle_cost_per_hour(spec: ClusterSpec, cat: Catalog) -> float:
    """What an idle cluster bills per hour: everything but the GPU nodes, plus the GPU nodes an
    idle cluster keeps. Slurm power saving keeps each partition's minNodes (all of them with
    idleMinutes 0); on Kubernetes the cluster autoscaler keeps each node group's minimum."""
    full = cost_per_hour(spec, cat)
    total = sum(line.usd_per_hour for line in full.lines if not line.item.startswith("partition "))
    power_saving = scheduler_of(spec.scheduler).power_saving
    for part in spec.partitions:
        sku = cat.get(part.sku)
        price = (sku.price.usd_per_hour or 0.0) if sku else 0.0
        if power_saving:
            kept = part.nodes if part.idle_minutes == 0 else part.min_nodes
        else:
            kept = autoscaled_min(part)
        total += kept * price
    return round(total, 2)
