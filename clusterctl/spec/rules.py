"""Cross-field rules over a structurally valid spec, each a small named check.

Each rule returns findings (error | warning | info) whose field is the path as the user wrote it;
the CLI decides what to do with the levels (errors stop everything, exit 2).
"""

from __future__ import annotations

import difflib
import ipaddress
from collections.abc import Callable, Iterator

from clusterctl.clouds import Feature
from clusterctl.errors import Finding
from clusterctl.nccl.units import parse_size
from clusterctl.platform import cloud_of, only_on, scheduler_of, unsupported
from clusterctl.spec.addressing import subnet_plan
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.defaults import head_sku
from clusterctl.spec.images import role_images
from clusterctl.spec.model import ClusterSpec, field_path
from clusterctl.spec.topology import SCALE_SET_MAX_VMS, scale_sets_of

Rule = Callable[[ClusterSpec, Catalog], Iterator[Finding]]

DOC_RANGES = [
    ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
]


def supported_combination(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    message = unsupported(Feature.CLUSTERS, spec.cloud, spec.scheduler)
    if message:
        yield Finding("error", message, field_path("scheduler"))


def node_shape_fits(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """What a partition's node shape (config/skus.yaml `node`) needs of the platform."""
    kinds = set()
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, spec.cloud)
        if sku is None or sku.node is None:
            continue
        where = field_path("partitions", i, "sku")
        if sku.node.cpu_arch == "arm64":
            message = unsupported(Feature.ARM64_GPU_NODES, spec.cloud, spec.scheduler)
            if message:
                yield Finding("error", message, where)
        if sku.nodes_per_nvlink_domain > 1:
            message = unsupported(Feature.MULTI_NODE_NVLINK, spec.cloud, spec.scheduler)
            if message:
                yield Finding("error", message, where)
        if not scheduler_of(spec.scheduler).head_node:
            continue
        kinds.add("block" if sku.nodes_per_nvlink_domain > 1 else "tree")
        if sku.node.sockets is None:
            yield Finding(
                "error",
                f"config/skus.yaml {sku.name}: node.sockets unverified; Slurm's node line needs it",
                where,
            )
        if sku.guest_memory is None:
            yield Finding(
                "warning",
                f"{sku.name}: the memory its guest sees is not published, so Slurm's RealMemory "
                f"is 95% of the advertised {sku.memory_gi_b:g} GiB; a node that sees less "
                "registers INVAL (check `slurmd -C` on the first node)",
                where,
            )
    if len(kinds) > 1:
        yield Finding(
            "error",
            "partitions whose NVLink domain spans VMs (topology/block) and partitions of HGX VMs "
            "(topology/tree) cannot share one Slurm cluster here; give them a stack each",
            field_path("partitions"),
        )


def gpu_image_carries_the_driver(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """A GPU node whose image has no NVIDIA driver, IMEX or InfiniBand stack bills and never runs a
    job (ND GB200 v6: no arm64 HPC image is in the marketplace, only plain Ubuntu): refuse it
    unless the stack names an image of its own (which it vouches for)."""
    for item in role_images(spec, cat):
        if item.hpc_image or not item.field.endswith(".image") or "partition" not in item.role:
            continue
        yield Finding(
            "error",
            f"{item.role} would boot {item.image}, plain Ubuntu without the NVIDIA driver, IMEX "
            "or InfiniBand stack; build the HPC image with Azure/azhpc-images (its GB200 "
            "releases are tagged ubuntu-hpc-gb200-2404-<date>) into an Azure Compute Gallery and "
            "set this field to the image version's id",
            item.field,
        )


def skus_exist(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku)
        where = field_path("partitions", i, "sku")
        if sku is None:
            close = difflib.get_close_matches(part.sku, cat.names(spec.cloud, gpu_only=True), 1)
            hint = f"did you mean '{close[0]}'?" if close else ""
            known = ", ".join(cat.names(spec.cloud, gpu_only=True))
            yield Finding(
                "error",
                f"unknown SKU '{part.sku}' for {spec.cloud}; {hint or 'known: ' + known}".strip(),
                where,
            )
        elif sku.cloud != spec.cloud:
            yield Finding(
                "error",
                f"'{sku.name}' is an {sku.cloud} type but the cluster's cloud is {spec.cloud}; "
                f"pick one of: {', '.join(cat.names(spec.cloud, gpu_only=True))}",
                where,
            )
        elif sku.gpus == 0:
            yield Finding("error", f"'{sku.name}' has no GPUs; use a GPU type", where)
    head = head_sku(spec)
    found = cat.get(head)
    if found is None or found.cloud != spec.cloud:
        yield Finding(
            "error",
            f"unknown head-node type '{head}' for {spec.cloud}; known: "
            + ", ".join(s.name for s in cat.skus if s.cloud == spec.cloud and s.gpus == 0),
            field_path("headNode", "sku"),
        )


@only_on(scheduler="slurm")
def slurm_keeps_the_fabric(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, spec.cloud)
        if sku is not None and part.fabric == "none" and sku.fabric.kind != "none":
            yield Finding(
                "error",
                f"a Slurm partition of {sku.name} always uses its {sku.fabric.kind} (NCCL, "
                "the health checks and topology.conf are built on it); remove fabric: none",
                field_path("partitions", i, "fabric"),
            )


def fabric_matches_sku(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, spec.cloud)
        if sku is None or part.fabric == "auto":
            continue
        if part.fabric == "none":
            continue  # a Slurm partition refuses it: slurm_keeps_the_fabric
        if sku.fabric.kind != part.fabric:
            has = sku.fabric.kind if sku.fabric.kind != "none" else "no RDMA fabric"
            yield Finding(
                "error",
                f"{part.fabric} requested but {sku.name} has {has}; "
                "remove the fabric key or pick a SKU that has it",
                field_path("partitions", i, "fabric"),
            )


def partition_names_unique(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    for i, part in enumerate(spec.partitions):
        if part.name in seen:
            yield Finding(
                "error",
                f"'{part.name}' is already the name of partitions[{seen[part.name]}]",
                field_path("partitions", i, "name"),
            )
        seen.setdefault(part.name, i)
    defaults = [i for i, p in enumerate(spec.partitions) if p.default]
    for i in defaults[1:]:
        yield Finding(
            "error",
            "only one partition can be the default",
            field_path("partitions", i, "default"),
        )


def node_counts(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        limit = part.max_nodes_per_scale_set
        scale_sets = cloud_of(spec.cloud).gpu_scale_sets and scheduler_of(spec.scheduler).head_node
        pools = cloud_of(spec.cloud).gpu_scale_sets and not scale_sets
        if (scale_sets or pools) and part.nodes > limit:
            sizes = "+".join(str(g.size) for g in scale_sets_of(part.name, part.nodes, limit))
            where = (
                f"one placement group ({SCALE_SET_MAX_VMS} VMs)"
                if limit == SCALE_SET_MAX_VMS
                else f"maxNodesPerScaleSet ({limit})"
            )
            how = (
                "node pools (label gpu-clusters/fabric); a multi-node job selects one, and "
                "validate checks the first"
                if pools
                else "scale sets; jobs stay inside one unless they ask otherwise"
            )
            yield Finding(
                "info",
                f"{part.nodes} nodes exceed {where}: split into {sizes} VMs, each its own "
                f"InfiniBand fabric, filled in order, as {how}",
                field_path("partitions", i, "nodes"),
            )
        sku = cat.get(part.sku, spec.cloud)
        if scale_sets and sku and sku.node and sku.nodes_per_nvlink_domain > 1:
            yield from _whole_nvlink_domains(
                part.nodes, limit, sku.nodes_per_nvlink_domain, sku.name, i
            )
        if sku and sku.fabric.kind != "none" and part.nodes == 1:
            yield Finding(
                "info",
                "a single node never uses the fabric: NCCL validation checks NVLink only",
                field_path("partitions", i, "nodes"),
            )


def _whole_nvlink_domains(
    nodes: int, limit: int, domain: int, sku: str, i: int
) -> Iterator[Finding]:
    """Slurm's topology/block takes its base block size from the first block and refuses a smaller
    one after it (slurmctld 24.11 exits: 'Block configuration (...) children count lower than
    bblock_node_cnt', topology/block/block_record.c): a partition or a scale set must hold whole
    NVLink domains."""
    if nodes % domain:
        whole = ", ".join(str(domain * k) for k in (1, 2, 3))
        yield Finding(
            "error",
            f"{nodes} nodes: one {sku} NVLink domain is {domain} VMs, and Slurm's topology/block "
            f"refuses a partial one; use a multiple of {domain} ({whole}, ...)",
            field_path("partitions", i, "nodes"),
        )
    elif nodes > limit and limit % domain:
        most = limit - limit % domain
        yield Finding(
            "error",
            f"a scale set of {limit} VMs would split an NVLink domain of {domain} VMs; "
            f"set maxNodesPerScaleSet to a multiple of {domain} (at most {most})",
            field_path("partitions", i, "maxNodesPerScaleSet"),
        )


def spot_on_fabric(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if part.spot and part.nodes > 1:
            yield Finding(
                "warning",
                "spot VMs can be evicted at any time; one eviction kills every multi-node job",
                field_path("partitions", i, "spot"),
            )


def aws_placement(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, spec.cloud)
        if cloud_of(spec.cloud).gpu_scale_sets or sku is None:
            continue
        if sku.fabric.kind == "efa" and len(part.zones) > 1:
            yield Finding(
                "error",
                f"EFA nodes must share one availability zone and subnet; list one zone, "
                f"not {len(part.zones)}",
                field_path("partitions", i, "zones"),
            )
        if part.capacity_block and not part.capacity_reservation_id:
            yield Finding(
                "error",
                "a capacity block needs its capacityReservationId",
                field_path("partitions", i, "capacityReservationId"),
            )
    for i, part in enumerate(spec.partitions):
        message = unsupported(Feature.ZONES_AND_RESERVATIONS, spec.cloud, spec.scheduler)
        if message and (part.zones or part.capacity_reservation_id):
            yield Finding(
                "error",
                message,
                field_path("partitions", i, "zones" if part.zones else "capacityReservationId"),
            )


def network_layout(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    space = ipaddress.ip_network(spec.network.address_space)
    if space.version == 4 and space.prefixlen > 22:
        yield Finding(
            "error",
            f"{space} is too small; use a /22 or larger (e.g. 10.40.0.0/16)",
            field_path("network", "addressSpace"),
        )
        return
    plan = {k: ipaddress.ip_network(v) for k, v in subnet_plan(spec).items()}
    fields = {
        "scheduler": ("network", "schedulerSubnet"),
        "compute": ("network", "computeSubnet"),
        "lustre": ("storage", "lustre", "subnet"),
    }
    for role, net in plan.items():
        if net.version != space.version or not net.subnet_of(space):  # type: ignore[arg-type]
            yield Finding(
                "error",
                f"{net} is not inside addressSpace {space}",
                field_path(*fields[role]),
            )
    if "lustre" in plan:
        for role in ("scheduler", "compute"):
            if plan["lustre"].overlaps(plan[role]):
                yield Finding(
                    "error",
                    f"{plan['lustre']} (Managed Lustre) overlaps {plan[role]} ({role}); give "
                    "storage.lustre.subnet a range of its own inside addressSpace",
                    field_path(*fields["lustre"]),
                )
    if plan["scheduler"].overlaps(plan["compute"]):
        given = "computeSubnet" if spec.network.compute_subnet else "schedulerSubnet"
        yield Finding(
            "error",
            f"{plan['compute']} (compute) overlaps {plan['scheduler']} (scheduler); give the two "
            "subnets disjoint ranges inside addressSpace",
            field_path("network", given),
        )


def ssh_exposure(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, cidr in enumerate(spec.ssh.allowed_cidrs):
        net = ipaddress.ip_network(cidr)
        where = field_path("ssh", "allowedCidrs", i)
        if net.prefixlen == 0 and not spec.ssh.allow_world_open:
            yield Finding(
                "error",
                f"{cidr} opens SSH to the whole internet; list your office or VPN range, or set "
                "ssh.allowWorldOpen: true if you really mean it",
                where,
            )
        elif net.prefixlen == 0:
            yield Finding("warning", "SSH is open to the whole internet", where)
        elif any(net.overlaps(d) for d in DOC_RANGES):
            yield Finding(
                "warning",
                f"{cidr} is a documentation range (RFC 5737) that nobody connects from; replace "
                "it with your own range before `pulumi up`",
                where,
            )
    head_node = scheduler_of(spec.scheduler).head_node
    if not spec.ssh.allowed_cidrs and head_node:
        yield Finding(
            "warning",
            "no allowedCidrs: nothing can reach the scheduler over SSH",
            field_path("ssh", "allowedCidrs"),
        )
    key = spec.ssh.public_key  # its form: rules_input.ssh_key_parses
    if key is None and head_node:
        yield Finding(
            "info",
            "no publicKey: the program makes an SSH key pair; read the private key with "
            "`pulumi stack output --show-secrets sshPrivateKey`",
            field_path("ssh", "publicKey"),
        )


def validation_thresholds(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    nccl = spec.validation.nccl
    if (
        nccl.fail_below_gbps
        and nccl.warn_below_gbps
        and nccl.warn_below_gbps < nccl.fail_below_gbps
    ):
        yield Finding(
            "error",
            f"warnBelowGbps ({nccl.warn_below_gbps}) is below failBelowGbps "
            f"({nccl.fail_below_gbps}); the warn band sits above the floor",
            field_path("validation", "nccl", "warnBelowGbps"),
        )
    # The sizes themselves are checked by the model's ByteSize; their order is checked here.
    if parse_size(nccl.min_bytes) > parse_size(nccl.max_bytes):
        yield Finding(
            "error",
            f"minBytes ({nccl.min_bytes}) is above maxBytes ({nccl.max_bytes})",
            field_path("validation", "nccl", "minBytes"),
        )


def cloud_only_checks(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """What only the cloud can answer: said, not silently skipped (`up` asks first)."""
    if not cloud_of(spec.cloud).quota_preflight:
        return
    sizes = sorted(
        {p.sku for p in spec.partitions}
        | ({head_sku(spec)} if scheduler_of(spec.scheduler).head_node else set())
    )
    yield Finding(
        "info",
        f"not checked offline: whether {', '.join(sizes)} are offered to your subscription in "
        f"{spec.region}, and the vCPU quota of their families; `clusterctl up` asks Azure first",
    )


RULES: tuple[Rule, ...] = (
    supported_combination,
    skus_exist,
    node_shape_fits,
    gpu_image_carries_the_driver,
    fabric_matches_sku,
    slurm_keeps_the_fabric,
    partition_names_unique,
    node_counts,
    spot_on_fabric,
    aws_placement,
    network_layout,
    ssh_exposure,
    validation_thresholds,
    cloud_only_checks,
)
