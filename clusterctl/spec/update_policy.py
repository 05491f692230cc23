"""What each edit of a deployed stack does: per changed field, applied in place, replaces something
(and what), or refused; like AWS ParallelCluster's per-field update policy.

Pure: `diff(old, new)` compares two validated specs. Partitions are matched by name, so a removed
or added partition is one change, not a shift of every index after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from clusterctl.platform import cloud_of, scheduler_of
from clusterctl.spec.catalog import catalog
from clusterctl.spec.images import parse_azure_image
from clusterctl.spec.model import ClusterSpec, PartitionSpec
from clusterctl.spec.topology import scale_sets_of

Policy = Literal["in place", "replaces", "refused"]


@dataclass(frozen=True)
class Rule:
    policy: Policy
    affects: str
    loses: bool = False
    """A replacement that loses data, running jobs or the scheduler for minutes: `up` needs an
    explicit flag for it."""
    keeps: str = ""
    """What a replacement keeps, said in `up`'s list of edits."""


@dataclass(frozen=True)
class Change:
    path: str
    policy: Policy
    affects: str
    detail: str
    loses: bool = False
    keeps: str = ""


EVERYTHING = Rule("replaces", "every resource: a new cluster, its data and jobs gone", loses=True)
# A replaced scheduler, login or jump host VM is deleted first and its successor takes the same NIC
# and, on the scheduler, the same data disk (components/azure/slurm/vm_replacement.py).
_SCHEDULER_DOWN = (
    "deleted, then created again with its OS disk; Slurm answers no command until it is back "
    "(minutes), running jobs go on"
)
_SCHEDULER_KEEPS = (
    "its NIC (the same private and public IP), hostname and data disk: /home (unless on Azure "
    "Files), /sched, Slurm's state (queue, drains, reservations), the accounting database, "
    "Prometheus's data"
)
_LOGIN_KEEPS = "each one's NIC (the same private and public IP) and hostname; /home is not on it"
SINGLE_VMS = Rule(
    "replaces",
    f"the scheduler VM ({_SCHEDULER_DOWN}), the login VMs (their sessions end) and the jump host",
    loses=True,
    keeps=(
        f"the scheduler keeps {_SCHEDULER_KEEPS}; login VMs and the jump host keep {_LOGIN_KEEPS}"
    ),
)
HEAD_SKU = Rule(
    "replaces",
    f"the scheduler VM ({_SCHEDULER_DOWN}) and the login VMs unless loginNodes.sku sets theirs",
    loses=True,
    keeps=f"the scheduler keeps {_SCHEDULER_KEEPS}; login VMs keep {_LOGIN_KEEPS}",
)
NETWORK = Rule("replaces", "the VNet, its subnets and every VM on them", loses=True)
SCALE_SETS = Rule("replaces", "the partition's scale sets: every VM and its jobs", loses=True)
SLURM_CONF = Rule("in place", "slurm.conf on the scheduler (config sync, scontrol reconfigure)")
TEAM = Rule(
    "in place",
    "the team Run Command: Slurm's associations and the scheduler's users now, every node's "
    "within a minute; no reboot",
)
NEW_VMS = Rule("in place", "the VM profile: VMs created from now on; running VMs keep theirs")
NEW_IMAGE = Rule(
    "in place",
    "the scale sets' image: VMs created from now on boot it; running and powered-down VMs keep "
    "theirs (a reimage too) until brought to the new model (`az vmss update-instances`)",
)
# A scale set's image publisher, offer and sku cannot change in place (their release is another
# Ubuntu): components/azure/slurm/gpu_partition.py replaces the sets on them.
NEW_IMAGE_RELEASE = Rule(
    "replaces",
    "the partition's scale sets (deleted, then created from the new image): every VM and its jobs",
    loses=True,
)
SHARED_FS = "kubernetes.sharedFilesystem"
NEW_SHARED_FS = Rule("in place", "a new shared file system, its volume and claim")
LUSTRE = "storage.lustre"
NEW_LUSTRE = Rule(
    "in place",
    "a new Managed Lustre file system and its subnet; nodes made from now on mount it (running "
    "nodes once reimaged or replaced)",
)
LUSTRE_REMADE = Rule(
    "replaces",
    "the Managed Lustre file system and its data (its SKU, size, subnet and zone are fixed when "
    "it is made; a protected one makes `up` stop instead)",
    loses=True,
)
AUTOSCALER_MIN = Rule("in place", "the GPU node group's autoscaler minimum")
NODES_ROLL = Rule(
    "replaces",
    "every Kubernetes node, one at a time (its pods evicted, a running multi-node job ends)",
    loses=True,
)
PLATFORM_RULES: Final[dict[tuple[str, str, str], Rule]] = {
    # (cloud, scheduler, path): what an edit does on that platform, where it differs from RULES.
    # EKS copies the stack tags into the GPU launch template's tag specifications
    # (instances, volumes, interfaces): a tag edit makes a new template version, to which the
    # node group is pinned, so EKS replaces every GPU node (components/aws/gpu_node_group.py).
    ("aws", "kubernetes", "tags"): Rule(
        "replaces",
        "every resource's tags, and a new launch template version: EKS replaces every GPU node, "
        "one at a time (its pods evicted, a running multi-node job ends)",
        loses=True,
    ),
    # The node groups and pools carry the cluster's version (and on EKS its newest AMI release):
    # the control plane upgrades, then each node is replaced with one of the new version.
    ("aws", "kubernetes", "kubernetes.version"): NODES_ROLL,
    ("azure", "kubernetes", "kubernetes.version"): NODES_ROLL,
    # AKS makes a cluster private only when it creates it (MicrosoftDocs azure-aks-docs
    # private-clusters.md: converting an existing cluster is supported only with API server
    # VNet integration, which the stack does not use); EKS switches its endpoints in place.
    ("azure", "kubernetes", "kubernetes.privateApiServer"): Rule(
        "refused", "the AKS cluster: a private API server only on a new cluster (down, then up)"
    ),
}

RULES: Final[dict[str, Rule]] = {
    "name": EVERYTHING,
    "cloud": EVERYTHING,
    "region": EVERYTHING,
    "scheduler": EVERYTHING,
    "ssh.adminUser": SINGLE_VMS,
    "ssh.publicKey": SINGLE_VMS,
    "ssh.allowedCidrs": Rule("in place", "the network security group's SSH rule"),
    "ssh.allowWorldOpen": Rule("in place", "the network security group's SSH rule"),
    "ssh.access": Rule("in place", "the jump host and the scheduler's public IP"),
    "network.addressSpace": NETWORK,
    "network.schedulerSubnet": NETWORK,
    "network.computeSubnet": NETWORK,
    "headNode.sku": HEAD_SKU,
    "headNode.image": SINGLE_VMS,
    "headNode.accounting": Rule("refused", "the scheduler's first-boot setup, never re-run"),
    "storage.kind": Rule("replaces", "/home's disk or share, and the data on it", loses=True),
    "storage.sizeGib": Rule("in place", "the data disk grows (Azure cannot shrink one)"),
    "storage.keepOnDestroy": Rule("in place", "whether `down` keeps the data disk"),
    "storage.backup": Rule("in place", "the data disk's backup policy (its snapshots stay)"),
    "partitions[].sku": SCALE_SETS,
    "partitions[].spot": SCALE_SETS,
    "partitions[].zones": SCALE_SETS,
    "partitions[].fabric": SCALE_SETS,
    "partitions[].capacityReservationId": SCALE_SETS,
    "partitions[].capacityBlock": SCALE_SETS,
    "partitions[].image": NEW_IMAGE,
    # gres.conf and every node's boot-time MIG layout must agree: new VMs boot the new layout.
    "partitions[].sharing": SCALE_SETS,
    "partitions[].idleMinutes": SLURM_CONF,
    "partitions[].minNodes": SLURM_CONF,
    "partitions[].default": SLURM_CONF,
    "partitions[].maxNodesPerScaleSet": Rule(
        "refused", "the partition's scale sets: nodes would move between them"
    ),
    "healthChecks": NEW_VMS,
    "validation": Rule("in place", "the post-deploy validation only"),
    "kubernetes": Rule("in place", "the Kubernetes resources: see `pulumi preview`"),
    SHARED_FS: Rule(
        "replaces",
        "the shared file system and its data (removed from the stack; a protected one makes "
        "`up` stop instead)",
        loses=True,
    ),
    f"{SHARED_FS}.sizeGib": Rule("in place", "the file system grows (FSx cannot shrink one)"),
    f"{SHARED_FS}.throughputMbpsPerTib": Rule("in place", "the file system's throughput tier"),
    f"{SHARED_FS}.keepOnDestroy": Rule("in place", "whether `down` keeps the file system"),
    LUSTRE: LUSTRE_REMADE,
    f"{LUSTRE}.mountPoint": Rule(
        "in place", "where nodes made from now on mount it (running nodes once reimaged)"
    ),
    f"{LUSTRE}.maintenanceDay": Rule("in place", "the file system's maintenance window"),
    f"{LUSTRE}.maintenanceTimeUtc": Rule("in place", "the file system's maintenance window"),
    f"{LUSTRE}.keepOnDestroy": Rule("in place", "whether `down` keeps the file system"),
    "tags": Rule("in place", "every resource's tags"),
    "loginNodes.count": Rule(
        "in place", "login VMs added or removed (sessions on a removed one end)"
    ),
    "loginNodes.entraIdGroup": Rule("in place", "the login VMs' Entra extension and role"),
    "loginNodes.sku": Rule(
        "replaces",
        "the login VMs: deleted, then created again with their OS disks (sessions and files "
        "outside /home end)",
        keeps=_LOGIN_KEEPS,
    ),
    "users": TEAM,
    "accounts": TEAM,
    "qos": TEAM,
}


def _flat(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flat(item, f"{path}.{key}" if path else key))
        return out
    return {path: value}


def _rule(path: str) -> Rule:
    generic = path.split("[", 1)[0] + "[]" + path.split("]", 1)[1] if "[" in path else path
    while generic:
        if generic in RULES:
            return RULES[generic]
        generic = generic.rpartition(".")[0]
    return Rule("in place", "see `pulumi preview`")


def _platform_rule(spec: ClusterSpec, path: str) -> Rule | None:
    """PLATFORM_RULES' rule for `path` or the nearest field above it (tags.team -> tags)."""
    while path:
        rule = PLATFORM_RULES.get((spec.cloud, spec.scheduler, path))
        if rule is not None:
            return rule
        path = path.rpartition(".")[0]
    return None


def _names(part: PartitionSpec) -> list[str]:
    sets = scale_sets_of(part.name, part.nodes, part.max_nodes_per_scale_set)
    return [h for ss in sets for h in ss.hostnames()]


def _span(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]} ({len(names)} nodes)"


def _nodes(path: str, old: PartitionSpec, new: PartitionSpec) -> Change:
    before, after = _names(old), _names(new)
    if new.nodes > old.nodes:
        detail = f"{old.nodes} -> {new.nodes}: adds {_span(after[len(before) :])}"
        return Change(path, "in place", "the last scale set grows or new ones open", detail)
    gone = before[len(after) :]
    detail = (
        f"{old.nodes} -> {new.nodes}: drains {_span(gone)}, waits until they are idle, "
        "then deletes their VMs"
    )
    return Change(path, "in place", "the partition's last scale sets shrink", detail)


def _image_release(spec: ClusterSpec, part: PartitionSpec) -> tuple[str, ...]:
    """What of a GPU scale set's image Azure cannot change in place: a marketplace image's
    publisher, offer and sku (the catalog's image when the stack names none); a gallery image
    id changes in place, as a version does. () off Azure's scale sets."""
    if not (cloud_of(spec.cloud).gpu_scale_sets and scheduler_of(spec.scheduler).head_node):
        return ()
    if part.image:
        image = parse_azure_image(part.image)
        return image.urn[:3] if image and image.urn else ("gallery",)
    sku = catalog().get(part.sku, spec.cloud)
    if sku is None:
        return ()
    entry = catalog().gpu_image(sku)
    return tuple(str(entry[k]) for k in ("publisher", "offer", "sku"))


def diff(old: ClusterSpec, new: ClusterSpec) -> list[Change]:
    """Every changed field of `new` against the deployed `old`, with what applying it does."""
    changes = _cluster_changes(old, new)
    olds = {p.name: p for p in old.partitions}
    for i, part in enumerate(new.partitions):
        was = olds.pop(part.name, None)
        changes += _partition_changes(new, f"partitions[{i}]", was, part)
    for name, was in olds.items():
        detail = f"removes partition {name!r}: drains {_span(_names(was))}, then deletes them"
        changes.append(Change(f"partitions[{name}]", "in place", "its scale sets", detail))
    return changes


def _cluster_changes(old: ClusterSpec, new: ClusterSpec) -> list[Change]:
    """The changed fields outside the partitions."""
    changes: list[Change] = []
    skip = {"partitions"}
    a = _flat(old.model_dump(by_alias=True, mode="json", exclude=skip))
    b = _flat(new.model_dump(by_alias=True, mode="json", exclude=skip))
    for path in sorted(a.keys() | b.keys()):
        if a.get(path) != b.get(path):
            rule = _rule(path)
            rule = _platform_rule(new, path) or rule
            if path.startswith(f"{SHARED_FS}.") and f"{SHARED_FS}.kind" not in a:
                rule = NEW_SHARED_FS  # added, not changed
            if path.startswith(f"{LUSTRE}.") and f"{LUSTRE}.sizeTib" not in a:
                rule = NEW_LUSTRE
            detail = f"{a.get(path)!r} -> {b.get(path)!r}"
            changes.append(Change(path, rule.policy, rule.affects, detail, rule.loses, rule.keeps))
    return changes


def _partition_changes(
    new: ClusterSpec, path: str, was: PartitionSpec | None, part: PartitionSpec
) -> list[Change]:
    """What changes in one partition of `new` (`was`: the deployed one of its name, if any)."""
    if was is None:
        return [Change(path, "in place", "new scale sets", f"adds partition {part.name!r}")]
    changes = [_nodes(f"{path}.nodes", was, part)] if was.nodes != part.nodes else []
    x = _flat(was.model_dump(by_alias=True, mode="json", exclude={"nodes"}))
    y = _flat(part.model_dump(by_alias=True, mode="json", exclude={"nodes"}))
    for key in sorted(x.keys() | y.keys()):
        if x.get(key) != y.get(key):
            rule = _partition_rule(new, f"{path}.{key}", key, was, part)
            detail = f"{x.get(key)!r} -> {y.get(key)!r}"
            changes.append(
                Change(f"{path}.{key}", rule.policy, rule.affects, detail, rule.loses, rule.keeps)
            )
    return changes


def _partition_rule(
    new: ClusterSpec, path: str, key: str, was: PartitionSpec, part: PartitionSpec
) -> Rule:
    if key == "minNodes" and not scheduler_of(new.scheduler).power_saving:
        return AUTOSCALER_MIN
    if key == "image" and _image_release(new, was) != _image_release(new, part):
        return NEW_IMAGE_RELEASE
    return _rule(path)


def refusal(changes: list[Change], allow_replace: bool) -> str | None:
    """One line naming the first change `up` must not apply, or None."""
    for c in changes:
        if c.policy == "refused":
            return f"{c.path}: cannot change on a deployed cluster ({c.affects}): {c.detail}"
    for c in changes:
        if c.loses and not allow_replace:
            return (
                f"{c.path}: {c.detail} replaces {c.affects}; "
                "run again with --allow-replace to accept that"
            )
    return None
