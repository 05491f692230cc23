"""Values the cloud or Slurm would reject at deploy time, refused at plan time instead.

Each rule names the field as the user wrote it and says what to write instead. Limits are the
clouds' published ones (sources next to each constant).
"""

from __future__ import annotations

import base64
import binascii
import difflib
import ipaddress
import re
import struct
from collections.abc import Iterator

from clusterctl.clouds import Cloud
from clusterctl.constants import CLUSTER_TAG
from clusterctl.errors import Finding
from clusterctl.platform import cloud_of, only_on, scheduler_of
from clusterctl.spec.addressing import subnet_plan
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.images import (
    PLACEHOLDER_SUBSCRIPTION,
    how_to_move,
    parse_azure_image,
    role_images,
)
from clusterctl.spec.kubernetes import AUTOSCALER_IDLE_MINUTES
from clusterctl.spec.lustre import AMLFS_STEP_TIB, amlfs_sku, amlfs_subnet_prefix
from clusterctl.spec.model import ClusterSpec, field_path
from clusterctl.spec.rules import Rule

# Azure/azure-rest-api-specs Compute ComputeRP.json, OSProfile.adminUsername: "Disallowed values".
AZURE_FORBIDDEN_ADMIN_USERS = frozenset(
    {
        "administrator",
        "admin",
        "user",
        "user1",
        "test",
        "user2",
        "test1",
        "user3",
        "admin1",
        "1",
        "123",
        "a",
        "actuser",
        "adm",
        "admin2",
        "aspnet",
        "backup",
        "console",
        "david",
        "guest",
        "john",
        "owner",
        "root",
        "server",
        "sql",
        "support",
        "support_388945a0",
        "sys",
        "test2",
        "test3",
        "user4",
        "user5",
    }
)
# Azure managed disks: Premium SSD (v1) sizes go up to P80, 32,767 GiB (Azure docs, "Azure managed
# disk types"); Azure Files premium (NFS) shares: 100 GiB to 100 TiB ("Azure Files scalability
# and performance targets").
AZURE_DISK_MAX_GIB = 32767
AZURE_FILES_MIN_GIB, AZURE_FILES_MAX_GIB = 100, 102400
OWN_TAG_PREFIX = CLUSTER_TAG.split(":", 1)[0] + ":"
SLURM_RESERVED_PARTITIONS = frozenset({"default"})  # PartitionName=DEFAULT sets defaults
AWS_RESERVATION_ID = re.compile(r"^cr-[0-9a-f]{8}([0-9a-f]{9})?$")
SSH_KEY_TYPES = ("ssh-rsa", "ssh-ed25519")  # what Azure accepts for Linux VMs
AZURE_SUBNET_RESERVED = 5  # Azure keeps 5 addresses of every subnet


def region_exists(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    known = cat.regions.get(spec.cloud)
    if known is None or spec.region in known.regions:
        return
    other = next(
        (c for c, r in cat.regions.items() if c != spec.cloud and spec.region in r.regions), None
    )
    if other:
        title = cloud_of(other).title
        msg = f"'{spec.region}' is an {title} region, but the cluster's cloud is {spec.cloud}"
    else:
        close = difflib.get_close_matches(spec.region, known.regions, 1)
        msg = f"'{spec.region}' is not an {cloud_of(spec.cloud).title} region" + (
            f"; did you mean '{close[0]}'?" if close else " (config/regions.yaml lists them)"
        )
    yield Finding("error", msg, field_path("region"))


@only_on(cloud="aws")
def zones_belong_to_region(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        for j, zone in enumerate(part.zones):
            if not re.fullmatch(re.escape(spec.region) + r"[a-z]", zone):
                yield Finding(
                    "error",
                    f"'{zone}' is not an availability zone of {spec.region} (e.g. {spec.region}a)",
                    field_path("partitions", i, "zones", j),
                )


@only_on(scheduler="slurm")
def storage_kind_built(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """scheduler-nfs and (on Azure) azure-files-nfs are built; `none` is refused, not ignored."""
    if spec.storage.kind == "none":  # (Slurm runs on Azure only: clouds/aws.py `unsupported`)
        yield Finding(
            "error",
            "storage.kind none: Slurm needs /home and /sched shared by every node; use "
            "scheduler-nfs (the scheduler exports its data disk) or azure-files-nfs",
            field_path("storage", "kind"),
        )


@only_on(cloud="azure", scheduler="slurm")
def disk_sizes(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    size, kind = spec.storage.size_gib, spec.storage.kind
    where = field_path("storage", "sizeGib")
    if kind == "scheduler-nfs" and size > AZURE_DISK_MAX_GIB:
        yield Finding(
            "error",
            f"{size} GiB is beyond an Azure Premium SSD's {AZURE_DISK_MAX_GIB} GiB; use at most "
            f"{AZURE_DISK_MAX_GIB}, or storage.kind: azure-files-nfs for more",
            where,
        )
    elif kind == "azure-files-nfs" and not AZURE_FILES_MIN_GIB <= size <= AZURE_FILES_MAX_GIB:
        yield Finding(
            "error",
            f"an Azure Files premium share holds {AZURE_FILES_MIN_GIB} to {AZURE_FILES_MAX_GIB} "
            f"GiB, not {size}",
            where,
        )


RESERVED_MOUNTS = ("/home", "/sched", "/shared", "/mnt", "/nvme", "/opt", "/etc", "/usr", "/var")
"""Where the nodes already keep something (the NFS exports, the resource disk, the NVMe RAID) or
the system lives: a Lustre mount there would hide it."""


def managed_lustre(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """storage.lustre: built on Azure Slurm only, with a SKU, size and subnet Azure accepts
    (clusterctl/spec/lustre.py says where each number comes from)."""
    fs = spec.storage.lustre
    if fs is None:
        return
    where = ("storage", "lustre")
    # Slurm stacks run on Azure only (clouds/aws.py `unsupported`): a head node means Azure Slurm
    if not scheduler_of(spec.scheduler).head_node:
        yield Finding(
            "error",
            "storage.lustre (Azure Managed Lustre) is built for Azure Slurm stacks only; remove "
            "it (on EKS use kubernetes.sharedFilesystem)",
            field_path(*where),
        )
        return
    step = AMLFS_STEP_TIB.get(fs.throughput_mbps_per_tib)
    if step is None:
        yield Finding(
            "error",
            f"{fs.throughput_mbps_per_tib} MB/s per TiB is not an Azure Managed Lustre SKU "
            f"(AMLFS-Durable-Premium-N); use one of {', '.join(map(str, AMLFS_STEP_TIB))}",
            field_path(*where, "throughputMbpsPerTib"),
        )
    elif fs.size_tib % step:
        below = fs.size_tib // step * step
        use = f"{below} or {below + step}" if below else str(step)
        yield Finding(
            "error",
            f"{fs.size_tib} TiB is not a size {amlfs_sku(fs.throughput_mbps_per_tib)} makes: "
            f"a multiple of {step} TiB; use {use}",
            field_path(*where, "sizeTib"),
        )
    yield from _lustre_subnet_size(spec)
    if any(fs.mount_point == m or fs.mount_point.startswith(m + "/") for m in RESERVED_MOUNTS):
        yield Finding(
            "error",
            f"{fs.mount_point} would hide what the nodes keep there; mount it elsewhere, e.g. "
            "/lustre",
            field_path(*where, "mountPoint"),
        )


def _lustre_subnet_size(spec: ClusterSpec) -> Iterator[Finding]:
    fs = spec.storage.lustre
    assert fs is not None
    subnet = ipaddress.ip_network(subnet_plan(spec)["lustre"])
    needed = amlfs_subnet_prefix(fs.size_tib)
    where = field_path("storage", "lustre", "subnet" if fs.subnet else "sizeTib")
    if needed is None:
        yield Finding(
            "warning",
            f"{fs.size_tib} TiB is beyond Microsoft's subnet-size table (400 TiB at /23); ask "
            "Azure for the addresses it needs (az amlfs get-subnets-size) before `up`",
            where,
        )
    elif subnet.prefixlen > needed:
        yield Finding(
            "error",
            f"{subnet} is too small for {fs.size_tib} TiB of Managed Lustre: Microsoft asks for a "
            f"/{needed} or larger; give storage.lustre.subnet a /{needed}",
            where,
        )


def tag_limits(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for key, value in spec.tags.items():
        where = field_path("tags", key)
        problem = _tag_problem(cloud_of(spec.cloud), key, value)
        if problem:
            yield Finding("error", problem, where)


def _tag_problem(cloud: Cloud, key: str, value: str) -> str | None:
    if key.lower().startswith(OWN_TAG_PREFIX):
        return f"tags starting with '{OWN_TAG_PREFIX}' are the project's own; rename '{key}'"
    if not key or len(key) > cloud.tag_key_max:
        return f"a tag key on {cloud.name} has 1 to {cloud.tag_key_max} characters"
    if len(str(value)) > cloud.tag_value_max:
        return f"a tag value on {cloud.name} has at most {cloud.tag_value_max} characters"
    return cloud.tag_problem(key, str(value))


@only_on(cloud="azure")
def admin_user_allowed(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    user = spec.ssh.admin_user
    if user.lower() in AZURE_FORBIDDEN_ADMIN_USERS:
        yield Finding(
            "error",
            f"Azure refuses '{user}' as an admin user name; pick another, e.g. azureuser",
            field_path("ssh", "adminUser"),
        )


@only_on(scheduler="slurm")
def partition_names_allowed(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if part.name.lower() in SLURM_RESERVED_PARTITIONS:
            yield Finding(
                "error",
                f"Slurm reserves the partition name '{part.name}' (PartitionName=DEFAULT sets "
                "defaults for all); choose another name",
                field_path("partitions", i, "name"),
            )


@only_on(cloud="aws")
def reservation_ids(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        rid = part.capacity_reservation_id
        if rid and not AWS_RESERVATION_ID.match(rid):
            yield Finding(
                "error",
                f"'{rid}' is not a capacity reservation id (cr- and 17 hex digits)",
                field_path("partitions", i, "capacityReservationId"),
            )


def image_ids(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if part.image:
            cloud = cloud_of(spec.cloud)
            if not cloud.image_form_ok(part.image):
                yield Finding(
                    "error",
                    f"'{part.image}' is not an image {cloud.image_word} ({cloud.image_example})",
                    field_path("partitions", i, "image"),
                )


def head_image(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    image = spec.head_node.image
    if image is None:
        return
    where = field_path("headNode", "image")
    cloud = cloud_of(spec.cloud)
    if not scheduler_of(spec.scheduler).head_node or not cloud.gpu_scale_sets:
        yield Finding(
            "error",
            f"only a Slurm cluster on Azure has a scheduler VM whose image you choose; remove "
            f"it ({cloud.kubernetes_node_image} boots the system nodes)",
            where,
        )
    elif not cloud.image_form_ok(image):
        yield Finding(
            "error", f"'{image}' is not an image {cloud.image_word} ({cloud.image_example})", where
        )


def image_pins(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """An Azure image at version `latest` (or a gallery image without a version) is resolved when
    each VM is created: a node added or re-created later boots a newer image than its neighbours
    (another driver, NCCL, kernel)."""
    for item in role_images(spec, cat):
        image = parse_azure_image(item.image)
        if image is None:
            continue  # image_ids / head_image name the malformed ones
        if image.placeholder:
            yield Finding(
                "warning",
                f"{item.image} is a placeholder (subscription {PLACEHOLDER_SUBSCRIPTION}); "
                "replace it with your gallery image version's id before `pulumi up`",
                item.field,
            )
        elif not image.pinned:
            yield Finding(
                "warning",
                f"{item.image} is not pinned: a VM created later (a resize, a replace, a "
                "re-created scheduler) boots the newest version then, unlike its neighbours; "
                f"pin one: {how_to_move(spec, item)}",
                item.field,
            )


def ssh_key_parses(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    key = spec.ssh.public_key
    if key is None:
        return
    problem = _ssh_key_problem(key)
    if problem:
        yield Finding("error", problem, field_path("ssh", "publicKey"))


def _ssh_key_problem(key: str) -> str | None:
    parts = key.split()
    if len(parts) < 2 or not parts[0].startswith(("ssh-", "ecdsa-")):
        return "not an OpenSSH public key (expected 'ssh-ed25519 AAAA...' or 'ssh-rsa AAAA...')"
    kind, body = parts[0], parts[1]
    if kind not in SSH_KEY_TYPES:
        return f"Azure and this project accept {' or '.join(SSH_KEY_TYPES)} keys, not {kind}"
    try:
        blob = base64.b64decode(body, validate=True)
        (length,) = struct.unpack(">I", blob[:4])
        inner = blob[4 : 4 + length].decode()
    except (binascii.Error, struct.error, UnicodeDecodeError, ValueError):
        return "the key's body is not valid base64 of an OpenSSH key; paste the whole .pub line"
    if inner != kind:
        return f"the key says {kind} but its body holds a {inner or 'damaged'} key"
    return None


def option_pairs(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if part.spot and part.capacity_reservation_id:
            yield Finding(
                "error",
                "spot capacity cannot run in a capacity reservation; set spot: false or remove "
                "capacityReservationId",
                field_path("partitions", i, "spot"),
            )


@only_on(scheduler="slurm")
def no_kubernetes_keys(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """Settings of the other scheduler would be silently ignored: refuse them."""
    if "kubernetes" in spec.model_fields_set:
        yield Finding(
            "error",
            "kubernetes settings on a Slurm cluster have no effect; remove the kubernetes block",
            field_path("kubernetes"),
        )


@only_on(scheduler="kubernetes")
def no_slurm_keys(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """Settings of the other scheduler would be silently ignored: refuse them."""
    if "accounting" in spec.head_node.model_fields_set:
        yield Finding(
            "error",
            "Slurm accounting on a Kubernetes cluster has no effect; remove it",
            field_path("headNode", "accounting"),
        )
    if "health_checks" in spec.model_fields_set:
        yield Finding(
            "error",
            "healthChecks (Slurm's node health checks and drains) has no effect on a "
            "Kubernetes cluster; remove it",
            field_path("healthChecks"),
        )
    if "storage" in spec.model_fields_set:
        yield Finding(
            "error",
            "storage (Slurm's /home and /sched) has no effect on a Kubernetes cluster; remove it",
            field_path("storage"),
        )
    for i, part in enumerate(spec.partitions):
        if "idle_minutes" in part.model_fields_set:
            yield Finding(
                "error",
                "idleMinutes (Slurm power saving) has no effect on a Kubernetes cluster; remove "
                f"it (the cluster autoscaler removes a GPU node {AUTOSCALER_IDLE_MINUTES} "
                "minutes after its last GPU pod)",
                field_path("partitions", i, "idleMinutes"),
            )


@only_on(scheduler="slurm")
def power_saving_fields(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """idleMinutes/minNodes drive Slurm's power saving: refuse what Slurm cannot honour."""
    for i, part in enumerate(spec.partitions):
        if part.min_nodes > part.nodes:
            yield Finding(
                "error",
                f"minNodes {part.min_nodes} is more than the partition's {part.nodes} nodes; "
                f"set minNodes to at most {part.nodes}",
                field_path("partitions", i, "minNodes"),
            )
        elif part.idle_minutes == 0 and "min_nodes" in part.model_fields_set:
            yield Finding(
                "error",
                "minNodes has no effect with idleMinutes: 0 (no node is ever suspended); "
                "remove minNodes or set idleMinutes above 0",
                field_path("partitions", i, "minNodes"),
            )


@only_on(cloud="azure", scheduler="slurm")
def address_space_fits(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    try:
        compute = ipaddress.ip_network(subnet_plan(spec)["compute"])
    except (ValueError, KeyError):
        return  # network_layout reports an unusable layout
    usable = compute.num_addresses - AZURE_SUBNET_RESERVED
    if spec.total_nodes > usable:
        given = "computeSubnet" if spec.network.compute_subnet else "addressSpace"
        yield Finding(
            "error",
            f"{spec.total_nodes} nodes do not fit the compute subnet {compute} ({usable} usable "
            "addresses); use a larger range",
            field_path("network", given),
        )


RULES: tuple[Rule, ...] = (
    region_exists,
    zones_belong_to_region,
    storage_kind_built,
    disk_sizes,
    managed_lustre,
    tag_limits,
    admin_user_allowed,
    partition_names_allowed,
    reservation_ids,
    image_ids,
    head_image,
    image_pins,
    ssh_key_parses,
    option_pairs,
    no_kubernetes_keys,
    no_slurm_keys,
    power_saving_fields,
    address_space_fits,
)
