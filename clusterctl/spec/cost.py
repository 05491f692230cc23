"""What a cluster costs per hour at catalog prices: a pure function of the spec."""

from __future__ import annotations

from dataclasses import dataclass, replace

from clusterctl.figures import known_sum
from clusterctl.platform import cloud_of, disk_backup, nat_egress, scheduler_of
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.defaults import (
    JUMP_HOST_SKU,
    head_sku,
    login_count,
    login_sku,
    scheduler_disk_gib,
)
from clusterctl.spec.kubernetes import autoscaled_min
from clusterctl.spec.lustre import (
    AMLFS_PRICE_KEY,
    FSX_PRICE_KEY,
    GIB_PER_TIB,
    HOURS_PER_MONTH,
    amlfs_sku,
    shared_filesystem,
)
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
    note: str = ""
    """What the price is not: spot billed at on-demand, another region's price."""

    @property
    def usd_per_hour(self) -> float | None:
        """None: the catalog has no price for this type (unknown, never 0)."""
        if self.usd_per_hour_each is None:
            return None
        return self.count * self.usd_per_hour_each


@dataclass(frozen=True)
class Cost:
    lines: tuple[CostLine, ...]

    @property
    def total(self) -> float | None:
        """None (unknown) when any line has no price: a sum without it would read as the
        cluster's cost while leaving out what may be most of it."""
        return known_sum(line.usd_per_hour for line in self.lines)

    @property
    def priced_part(self) -> float:
        """The lines that have a price, summed: what is known of an unknown total."""
        return round(sum(line.usd_per_hour or 0.0 for line in self.lines), 2)

    @property
    def unpriced(self) -> list[str]:
        """Items whose type has no published on-demand price: they make the total unknown."""
        return [line.item for line in self.lines if line.usd_per_hour_each is None]

    @property
    def per_day(self) -> float | None:
        total = self.total
        return None if total is None else round(total * 24, 2)


def cost_per_hour(spec: ClusterSpec, cat: Catalog) -> Cost:
    """On-demand compute and the NAT gateway's hours (no disks, traffic or spot discounts): an
    upper bound to plan with."""
    lines = []
    if scheduler_of(spec.scheduler).head_node:
        lines.append(_line(cat, "head node", head_sku(spec), 1, spec.region))
        if spec.ssh.access == "jumphost":
            lines.append(_line(cat, "jump host", JUMP_HOST_SKU, 1, spec.region))
        if login_count(spec):
            lines.append(_line(cat, "login nodes", login_sku(spec), login_count(spec), spec.region))
    else:
        lines.append(
            _line(cat, "system nodes", head_sku(spec), spec.kubernetes.system_nodes, spec.region)
        )
        # what the cluster itself bills, idle or not (EKS's control plane, AKS's load balancer)
        lines += [
            _service(cat, spec.cloud, key, spec.region)
            for key in cloud_of(spec.cloud).kubernetes_services
        ]
        tier = cloud_of(spec.cloud).kubernetes_tier_service
        if tier and spec.kubernetes.aks_tier == "standard":
            lines.append(_service(cat, spec.cloud, tier, spec.region))
    for part in spec.partitions:
        line = _line(cat, f"partition {part.name}", part.sku, part.nodes, spec.region)
        if part.spot and line.usd_per_hour_each is not None:
            # The catalog holds on-demand prices only; a spot VM bills the cloud's current spot
            # rate, below on-demand, so the on-demand figure is this line's upper bound.
            spot = "spot: the on-demand price shown is an upper bound"
            line = replace(line, note="; ".join(n for n in (spot, line.note) if n))
        lines.append(line)
    if nat_egress(spec.cloud, spec.scheduler):
        lines += [_service(cat, spec.cloud, key, spec.region) for key in ("natGateway", "publicIp")]
    if _backs_up_disk(spec):
        lines.append(_disk_backup(cat, spec.cloud, scheduler_disk_gib(spec), spec.region))
    lines += _managed_lustre(cat, spec)
    fs = shared_filesystem(spec)
    if fs is not None:
        lines.append(
            _file_system(cat, spec.cloud, fs.size_gib, fs.throughput_mbps_per_tib, spec.region)
        )
    return Cost(tuple(lines))


def _service(cat: Catalog, cloud: str, key: str, region: str) -> CostLine:
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
        note=_other_region(price.region, region),
    )


def _file_system(cat: Catalog, cloud: str, size_gib: int, throughput: int, region: str) -> CostLine:
    """The shared file system: its provisioned GB (1 GiB billed as 1 GB, as the price pages
    quote) at the tier's per-GB-month price, per hour of a 730-hour month."""
    shape = f"{size_gib} GiB at {throughput} MB/s/TiB"
    price = cat.services.get(cloud, {}).get(FSX_PRICE_KEY.format(throughput=throughput))
    if price is None or price.usd_per_gb_month is None:
        return CostLine("shared file system (FSx for Lustre)", shape, 1, None, "", service=True)
    hourly = round(size_gib * price.usd_per_gb_month / HOURS_PER_MONTH, 4)
    return CostLine(
        f"{price.title}, {shape}", shape, 1, hourly, price.as_of, service=True,
        note=_other_region(price.region, region),
    )  # fmt: skip


def _managed_lustre(cat: Catalog, spec: ClusterSpec) -> list[CostLine]:
    """storage.lustre: its provisioned GiB at the SKU's per-GiB-month rate (Azure bills the
    capacity whatever is stored), per hour of a 730-hour month; unpriced where the catalog has
    no rate for the SKU (config/services.yaml says why)."""
    fs = spec.storage.lustre
    if fs is None or not scheduler_of(spec.scheduler).head_node:
        return []
    sku = amlfs_sku(fs.throughput_mbps_per_tib)
    shape = f"{fs.size_tib} TiB {sku}"
    key = AMLFS_PRICE_KEY.format(throughput=fs.throughput_mbps_per_tib)
    price = cat.services.get(spec.cloud, {}).get(key)
    if price is None or price.usd_per_gb_month is None:
        return [CostLine("Azure Managed Lustre", shape, 1, None, "", service=True)]
    gib = fs.size_tib * GIB_PER_TIB
    hourly = round(gib * price.usd_per_gb_month / HOURS_PER_MONTH, 4)
    return [
        CostLine(
            f"{price.title}, {shape}", shape, 1, hourly, price.as_of, service=True,
            note=_other_region(price.region, spec.region),
        )
    ]  # fmt: skip


def _backs_up_disk(spec: ClusterSpec) -> bool:
    return disk_backup(spec.cloud, spec.scheduler) and spec.storage.backup.enabled


def _disk_backup(cat: Catalog, cloud: str, disk_gib: int, region: str) -> CostLine:
    """The data disk's backups: the first incremental snapshot holds what the disk holds (at
    most its size, which is what is priced); each later one only the day's changes, and Azure
    Backup's protected-instance fee is not in the catalog: both are left out, said in the note."""
    shape = f"{disk_gib} GiB disk"
    price = cat.services.get(cloud, {}).get("diskSnapshot")
    if price is None or price.usd_per_gb_month is None:
        return CostLine("/shared backups", shape, 1, None, "", service=True)
    hourly = round(disk_gib * price.usd_per_gb_month / HOURS_PER_MONTH, 4)
    left_out = "one full copy; daily changes and the protected-instance fee come on top"
    note = "; ".join(n for n in (left_out, _other_region(price.region, region)) if n)
    return CostLine(
        f"{price.title}, {shape}", shape, 1, hourly, price.as_of, service=True, note=note
    )


def _line(cat: Catalog, item: str, sku_name: str, count: int, region: str) -> CostLine:
    """A VM line; a type the catalog lacks is an unpriced line, never left out."""
    sku = cat.get(sku_name)
    if sku is None:
        return CostLine(item, sku_name, count, None, "")
    price = sku.price
    note = _other_region(price.region, region) if price.usd_per_hour is not None else ""
    return CostLine(item, sku.name, count, price.usd_per_hour, price.as_of, note=note)


def _other_region(priced_in: str, region: str) -> str:
    """The catalog holds one region's price per type (config/skus.yaml, services.yaml); prices
    differ between regions, so a price read elsewhere says where it is from."""
    return "" if priced_in == region else f"{priced_in}'s price: the catalog has none for {region}"


def idle_cost_per_hour(spec: ClusterSpec, cat: Catalog) -> float | None:
    """What an idle cluster bills per hour: everything but the GPU nodes, plus the GPU nodes an
    idle cluster keeps. Slurm power saving keeps each partition's minNodes (all of them with
    idleMinutes 0); on Kubernetes the cluster autoscaler keeps each node group's minimum.
    None (unknown) when a line it counts has no catalog price."""
    full = cost_per_hour(spec, cat)
    costs = [line.usd_per_hour for line in full.lines if not line.item.startswith("partition ")]
    power_saving = scheduler_of(spec.scheduler).power_saving
    for part in spec.partitions:
        sku = cat.get(part.sku)
        price = sku.price.usd_per_hour if sku else None
        if power_saving:
            kept = part.nodes if part.idle_minutes == 0 else part.min_nodes
        else:
            kept = autoscaled_min(part)
        costs.append(0.0 if kept == 0 else None if price is None else kept * price)
    return known_sum(costs)


@dataclass(frozen=True)
class SharedGpuOffer:
    """What a partition with `sharing` offers jobs: one kind of slice or shard."""

    partition: str
    gres: str
    """What a job asks for: `gpu:1g.10gb` or `shard`."""
    per_node: int
    total: int
    usd_per_hour_each: float | None
    """The node's price per GPU times the slice's share of the GPU (compute slices of 7, or one
    shard of `shards`): what a slice-hour costs while the node runs; None: no catalog price."""
    request: str = ""
    """What a job asks for one: Slurm `--gres=gpu:1g.10gb:1`; Kubernetes the resource a pod
    requests (`nvidia.com/mig-1g.10gb: 1` under the `mixed` MIG strategy, or a time-sliced
    `nvidia.com/gpu: 1`)."""


def shared_gpu_offers(spec: ClusterSpec, cat: Catalog) -> list[SharedGpuOffer]:
    from clusterctl.spec.kubernetes import mig_resource
    from clusterctl.spec.mig import COMPUTE_SLICES, mig_placements

    kubernetes = scheduler_of(spec.scheduler).gpu_resources
    offers = []
    for part in spec.partitions:
        sku = cat.get(part.sku, spec.cloud)
        if part.sharing is None or sku is None or not sku.gpus:
            continue
        per_gpu = sku.price.usd_per_hour / sku.gpus if sku.price.usd_per_hour else None
        if part.sharing.shards:
            each = per_gpu / part.sharing.shards if per_gpu else None
            n = part.sharing.shards * sku.gpus
            request = (
                f"nvidia.com/gpu: 1 (time-sliced, {part.sharing.shards} per GPU)"
                if kubernetes
                else "--gres=shard:1"
            )
            offers.append(SharedGpuOffer(part.name, "shard", n, n * part.nodes, each, request))
            continue
        counts: dict[str, tuple[int, int]] = {}
        for p in mig_placements(part, sku, cat):
            n, _ = counts.get(p.profile.name, (0, 0))
            counts[p.profile.name] = (n + sku.gpus, p.profile.compute_slices)
        for name, (n, compute) in counts.items():
            each = per_gpu * compute / COMPUTE_SLICES if per_gpu else None
            request = f"{mig_resource(name)}: 1" if kubernetes else f"--gres=gpu:{name}:1"
            offers.append(
                SharedGpuOffer(part.name, f"gpu:{name}", n, n * part.nodes, each, request)
            )
    return offers
