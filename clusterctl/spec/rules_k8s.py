"""Preflight rules for Kubernetes GPU clusters (EKS with EFA, AKS with InfiniBand).

A fabric the SKU lacks (fabric_matches_sku) and EFA nodes over several zones (aws_placement) are
checked in clusterctl/spec/rules.py already; these add what the Kubernetes clusters need on top.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from clusterctl.clouds import Feature
from clusterctl.errors import Finding
from clusterctl.platform import cloud_of, only_on, scheduler_of, unsupported
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.kubernetes import (
    AKS_INFINIBAND_FEATURE,
    AKS_NODE_OS_UPGRADE_CHANNEL,
    AKS_UPGRADE_CHANNEL,
    MAINTENANCE_WINDOW,
    eks_support_type,
    kubernetes_version,
    nccl_image,
    reserved_capacity,
)
from clusterctl.spec.kubernetes_addons import cluster_autoscaler_image
from clusterctl.spec.lustre import (
    FSX_SIZE_STEP_GIB,
    FSX_THROUGHPUTS,
    fsx_size_ok,
    fsx_sizes_near,
)
from clusterctl.spec.model import ClusterSpec, field_path
from clusterctl.spec.rules import Rule

AKS_POOL_NAME_MAX = 12


@only_on(scheduler="kubernetes")
def api_server_reach(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """ssh.allowedCidrs is who may reach the Kubernetes API server. EKS and AKS both read an
    unset list as "anywhere" (EKS publicAccessCidrs defaults to 0.0.0.0/0; AKS without
    authorizedIPRanges has no filter), so an empty list is refused, not passed on."""
    if spec.ssh.allowed_cidrs:
        return
    service = cloud_of(spec.cloud).kubernetes_service.upper()
    if spec.kubernetes.private_api_server:
        yield Finding(
            "error",
            f"empty: with kubernetes.privateApiServer nothing could reach the {service} API "
            "server, not even `up`; list the private ranges of the VPN or peered network you "
            "run up and kubectl from (e.g. [10.8.0.0/16])",
            field_path("ssh", "allowedCidrs"),
        )
        return
    yield Finding(
        "error",
        f"empty: the {service} API server would be reachable from the whole "
        "internet; list your office or VPN range (e.g. [198.51.100.0/24]), or 0.0.0.0/0 with "
        "ssh.allowWorldOpen: true if you really mean it",
        field_path("ssh", "allowedCidrs"),
    )


@only_on(scheduler="kubernetes")
def private_api_server(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """A private API server is reached only from networks routed into the cluster's own: every
    `ssh.allowedCidrs` range must be private (RFC 1918 or shared 100.64/10); `up` itself must
    run from one of them."""
    if not spec.kubernetes.private_api_server:
        return
    for i, cidr in enumerate(spec.ssh.allowed_cidrs):
        net = ipaddress.ip_network(cidr, strict=False)
        if not any(net.subnet_of(p) for p in _PRIVATE_RANGES):  # type: ignore[arg-type]
            yield Finding(
                "error",
                f"{cidr} is not a private range: a private API server is reached only over a "
                "VPN or peering; list that network's private range (10/8, 172.16/12, "
                "192.168/16 or 100.64/10), or set kubernetes.privateApiServer: false",
                field_path("ssh", "allowedCidrs", i),
            )
    yield Finding(
        "warning",
        "the API server gets no public address: `up` installs the add-ons through it, so run "
        "`up`, kubectl and `validate` from a network in ssh.allowedCidrs that is connected "
        "(VPN, peering) to the cluster's network before `up` reaches the add-ons",
        field_path("kubernetes", "privateApiServer"),
    )


@only_on(cloud="aws", scheduler="kubernetes")
def private_api_server_routes(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """The EKS VPC is `network.addressSpace`: a network routed to it cannot share its addresses.
    (AKS makes its own VNet, whatever the stack's address space says.)"""
    if not spec.kubernetes.private_api_server:
        return
    own = ipaddress.ip_network(spec.network.address_space)
    for i, cidr in enumerate(spec.ssh.allowed_cidrs):
        if ipaddress.ip_network(cidr, strict=False).overlaps(own):
            yield Finding(
                "error",
                f"{cidr} overlaps network.addressSpace {own}: a network routed to the cluster's "
                "cannot share its addresses; change one of them",
                field_path("ssh", "allowedCidrs", i),
            )


_PRIVATE_RANGES = tuple(
    ipaddress.ip_network(c) for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                                      "100.64.0.0/10")
)  # fmt: skip


@only_on(cloud="aws", scheduler="kubernetes")
def aks_settings_on_eks(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """kubernetes.authorization, adminGroupObjectIds and aksTier are AKS settings: refused on
    EKS rather than ignored."""
    k8s = spec.kubernetes
    for key, value in (
        ("authorization", k8s.authorization != "azure-rbac"),
        ("adminGroupObjectIds", bool(k8s.admin_group_object_ids)),
        ("aksTier", k8s.aks_tier != "standard"),
    ):
        if value:
            yield Finding("error", "AKS only: remove it", field_path("kubernetes", key))


@only_on(cloud="azure", scheduler="kubernetes")
def aks_authorization(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """Kubernetes RBAC needs the Entra groups that get cluster-admin (local accounts are off:
    nobody else would be); admin groups mean nothing under Azure RBAC."""
    k8s = spec.kubernetes
    if k8s.authorization == "kubernetes-rbac" and not k8s.admin_group_object_ids:
        yield Finding(
            "error",
            "empty with authorization: kubernetes-rbac: with local accounts off nobody would be "
            "cluster-admin, not even `up`; list the object id of an Entra ID group you are in "
            "(az ad group show --group NAME --query id)",
            field_path("kubernetes", "adminGroupObjectIds"),
        )
    if k8s.authorization == "azure-rbac" and k8s.admin_group_object_ids:
        yield Finding(
            "error",
            "only with authorization: kubernetes-rbac; with Azure RBAC grant the groups an Azure "
            "role on the cluster instead (az role assignment create --scope <cluster id>)",
            field_path("kubernetes", "adminGroupObjectIds"),
        )


@only_on(cloud="azure", scheduler="kubernetes")
def aks_entra_sign_in(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """Say how AKS access works before `up` needs it: Entra ID, no local accounts."""
    yield Finding(
        "info",
        "AKS signs in with Entra ID (local accounts off, no admin certificate): the kubeconfig "
        "runs `kubelogin get-token --login azurecli`, so `pulumi up`, kubectl and clusterctl "
        "need kubelogin (`az aks install-cli`) and your `az login`; "
        + (
            "Kubernetes RBAC decides access (adminGroupObjectIds are cluster-admin)"
            if spec.kubernetes.authorization == "kubernetes-rbac"
            else "Azure RBAC decides access"
        ),
    )


@only_on(cloud="aws", scheduler="kubernetes")
def eks_upgrade_policy(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """Say when EKS may upgrade the cluster, and what that costs."""
    version = kubernetes_version(spec, cat)
    pin = (cat.versions.get("kubernetes") or {}).get("eks") or {}
    until = pin.get("standardSupportUntil") if str(pin.get("version")) == version else None
    yield Finding(
        "info",
        f"EKS {version} with supportType {eks_support_type(cat)}"
        + (f" (standard support until {until})" if until else "")
        + ": at the end of standard support EKS upgrades the control plane instead of "
        "billing extended support; move the node groups (pulumi up) before then",
        field_path("kubernetes", "version"),
    )


SUPPORTED_MINORS_BEHIND = 2
"""AKS supports three GA minor versions, the newest and the two before it ("N-2": MicrosoftDocs
azure-aks-docs articles/aks/supported-kubernetes-versions.md); EKS keeps a minor in standard
support for 14 months, about as long (AWS EKS version calendar: 1.34 until 2026-12-02, 1.35
until 2027-03-27), and this project pins supportType STANDARD."""


@only_on(scheduler="kubernetes")
def kubernetes_version_supported(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """A version the cloud no longer (or does not yet) create clusters with is refused here,
    not by the cloud halfway through `up`."""
    if not spec.kubernetes.version:
        return
    where = field_path("kubernetes", "version")
    service = cloud_of(spec.cloud).kubernetes_service
    version = spec.kubernetes.version
    if service == "eks" and version.count(".") > 1:
        yield Finding(
            "error",
            f"'{version}': EKS takes MAJOR.MINOR (e.g. \"{version.rsplit('.', 1)[0]}\"); it "
            "picks the patch itself",
            where,
        )
        return
    pin = str(((cat.versions.get("kubernetes") or {}).get(service) or {}).get("version", ""))
    if not re.fullmatch(r"1\.\d+", pin):
        return
    newest = int(pin.split(".")[1])
    minor = int(version.split(".")[1])
    oldest = newest - SUPPORTED_MINORS_BEHIND
    if minor < oldest:
        yield Finding(
            "error",
            f"{version} is older than {service.upper()} supports (1.{oldest} to {pin} as this "
            f'catalog knows it): use "{pin}", or leave kubernetes.version out for it',
            where,
        )
    elif minor > newest:
        yield Finding(
            "warning",
            f"{version} is newer than {pin}, the newest this catalog knows for "
            f"{service.upper()}: check that {service.upper()} offers it in {spec.region} "
            + (
                f"(`az aks get-versions -l {spec.region}`)"
                if service == "aks"
                else "(`aws eks describe-cluster-versions`)"
            ),
            where,
        )


@only_on(cloud="azure", scheduler="kubernetes")
def aks_upgrade_policy(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """Say when AKS may upgrade and reimage the nodes, and what that drains."""
    w = MAINTENANCE_WINDOW
    yield Finding(
        "info",
        f"AKS upgrades ({AKS_UPGRADE_CHANNEL} channel) and reimages nodes "
        f"({AKS_NODE_OS_UPGRADE_CHANNEL}) only {w['dayOfWeek']}s {w['startTime']} UTC for "
        f"{w['durationHours']} h, draining GPU nodes one at a time then; the GPU and network "
        "drivers never upgrade themselves, a new one arrives with a node's reimage",
        field_path("kubernetes", "version"),
    )


@only_on(scheduler="kubernetes")
def autoscaler_range(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """minNodes is the GPU node group's autoscaler minimum, nodes its maximum."""
    for i, part in enumerate(spec.partitions):
        where = field_path("partitions", i, "minNodes")
        if part.min_nodes > part.nodes:
            yield Finding(
                "error",
                f"minNodes ({part.min_nodes}) is more than nodes ({part.nodes}), the node "
                f"group's maximum; set minNodes to at most {part.nodes}",
                where,
            )
        elif reserved_capacity(part) and "min_nodes" in part.model_fields_set:
            yield Finding(
                "error",
                "minNodes has no effect in reserved capacity, which bills whether used or not: "
                f"the node group stays at {part.nodes} nodes; remove minNodes",
                where,
            )


@only_on(cloud="aws", scheduler="kubernetes")
def node_group_single_zone(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """Every EKS GPU node group sits in one subnet; EFA types are reported by aws_placement."""
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, "aws")
        if sku is None or sku.fabric.kind == "efa" or len(part.zones) <= 1:
            continue
        yield Finding(
            "error",
            f"a GPU node group uses one subnet in one availability zone; list one zone, "
            f"not {len(part.zones)} (add a second partition for a second zone)",
            field_path("partitions", i, "zones"),
        )


@only_on(cloud="aws")
def capacity_reservation_size(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if not part.capacity_reservation_id:
            continue
        size = getattr(part, "capacity_reservation_size", None)
        if size is None:
            yield Finding(
                "info",
                f"nodes ({part.nodes}) must fit {part.capacity_reservation_id}, which must be for "
                f"{part.sku} in this partition's zone; the plan cannot see its size",
                field_path("partitions", i, "capacityReservationId"),
            )
        elif part.nodes > size:
            yield Finding(
                "error",
                f"{part.nodes} nodes exceed the capacity reservation's {size} instances; "
                "nodes beyond it never start",
                field_path("partitions", i, "nodes"),
            )


@only_on(cloud="aws")
def reservation_placement(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """An ODCR gets no new placement group (docs/decisions/0004): say where placement comes from."""
    for i, part in enumerate(spec.partitions):
        if not part.capacity_reservation_id or part.capacity_block:
            continue
        yield Finding(
            "info",
            f"no placement group is made for {part.capacity_reservation_id}: an ODCR serves only "
            "instances launched into the placement group it was created in; for EFA locality, "
            "create the reservation in a cluster placement group (--placement-group-arn)",
            field_path("partitions", i, "capacityReservationId"),
        )


@only_on(cloud="azure")
def no_capacity_blocks(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if part.capacity_block:
            yield Finding(
                "error",
                "capacity blocks are an AWS option; remove it",
                field_path("partitions", i, "capacityBlock"),
            )


@only_on(cloud="aws")
def capacity_block_options(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if not part.capacity_block:
            continue
        where = field_path("partitions", i, "capacityBlock")
        if part.spot:
            yield Finding(
                "error",
                "a capacity block is prepaid capacity, not spot; set spot: false",
                field_path("partitions", i, "spot"),
            )
        else:
            yield Finding(
                "info",
                "a capacity block places its instances itself: no placement group is made, and "
                "the node group only starts inside the block's reserved time",
                where,
            )


@only_on(cloud="azure", scheduler="kubernetes")
def aks_infiniband_registration(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, "azure")
        if sku is None or sku.fabric.kind != "infiniband" or part.fabric == "none":
            continue
        namespace, feature = AKS_INFINIBAND_FEATURE
        yield Finding(
            "info",
            f"`pulumi up` stops before creating anything unless the subscription feature "
            f"{namespace}/{feature} is Registered (the plan assumes it is): the first time, run "
            f"`az feature register --namespace {namespace} --name {feature}`, wait for "
            f"Registered, then `az provider register --namespace {namespace}`",
            field_path("partitions", i, "sku"),
        )
        return


@only_on(cloud="azure", scheduler="kubernetes")
def aks_pool_names(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if len(part.name) > AKS_POOL_NAME_MAX or part.name == "system":
            yield Finding(
                "error",
                f"'{part.name}' cannot name an AKS node pool: at most {AKS_POOL_NAME_MAX} "
                "characters, and 'system' is the system pool",
                field_path("partitions", i, "name"),
            )


@only_on(scheduler="kubernetes")
def kubernetes_node_image(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if part.image:
            node = cloud_of(spec.cloud).kubernetes_node_image
            yield Finding(
                "error",
                f"Kubernetes node groups use the {node}; a custom image is not supported yet, "
                "remove it",
                field_path("partitions", i, "image"),
            )


@only_on(scheduler="kubernetes")
def kubernetes_fabricless_multinode(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, spec.cloud)
        if sku is None or part.nodes < 2:
            continue
        if sku.fabric.kind == "none" or part.fabric == "none":
            yield Finding(
                "warning",
                f"{part.nodes} nodes without an RDMA fabric: multi-node NCCL falls back to TCP "
                "sockets, far below EFA/InfiniBand bandwidth",
                field_path("partitions", i, "fabric" if part.fabric == "none" else "sku"),
            )


@only_on(scheduler="kubernetes")
def nccl_image_pinned(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    if spec.validation.nccl.container_image:
        return
    image = nccl_image(spec, cat)
    if image == cloud_of(spec.cloud).nccl_tests_image or image.endswith(":latest"):
        yield Finding(
            "info",
            f"the NCCL test MPIJob runs {image}, a moving tag; pin an image with nccl-tests "
            "and OpenMPI built for this fabric",
            field_path("validation", "nccl", "containerImage"),
        )


@only_on(scheduler="kubernetes")
def cluster_autoscaler_pinned(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """The stack's own cluster autoscaler (EKS) runs the image of the cluster's minor."""
    if not cloud_of(spec.cloud).kubernetes_autoscaler_release:
        return
    if any(f.level == "error" for f in kubernetes_version_supported(spec, cat)):
        return  # a version refused there has no image to pin either: one line, not two
    version = kubernetes_version(spec, cat)
    if cluster_autoscaler_image(cat, version) is None:
        yield Finding(
            "error",
            f"no cluster-autoscaler image is pinned for Kubernetes {version} (its minor must "
            "match the cluster's): add one under helmCharts.clusterAutoscaler.imageTags in "
            "config/versions.yaml, or set a version listed there",
            field_path("kubernetes", "version"),
        )


_IAM_PRINCIPAL = re.compile(r"^arn:aws(-[a-z]+)*:iam::\d{12}:(role|user)/([\w+=,.@/-]+)$")
_STS_SESSION = re.compile(r"^arn:aws(-[a-z]+)*:sts::(\d{12}):assumed-role/([^/]+)/")


def admin_principals(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """kubernetes.adminPrincipalArns: IAM role or user ARNs, on EKS stacks only."""
    arns = spec.kubernetes.admin_principal_arns
    if not arns:
        return
    on_kubernetes = not scheduler_of(spec.scheduler).head_node
    if not (on_kubernetes and cloud_of(spec.cloud).kubernetes_admin_principals):
        yield Finding(
            "error",
            "EKS access entries only: remove it. On AKS whoever runs `pulumi up` gets the Azure "
            "role 'Azure Kubernetes Service RBAC Cluster Admin' on the cluster; grant others an "
            "Azure RBAC role on it (az role assignment create --scope <cluster id>)",
            field_path("kubernetes", "adminPrincipalArns"),
        )
        return
    for i, arn in enumerate(arns):
        where = field_path("kubernetes", "adminPrincipalArns", i)
        session = _STS_SESSION.match(arn)
        if session:
            yield Finding(
                "error",
                f"{arn} is an STS session, not a principal; give the role's IAM ARN with its path "
                f"(`aws iam get-role --role-name {session.group(3)} --query Role.Arn`)",
                where,
            )
        elif not _IAM_PRINCIPAL.match(arn):
            yield Finding(
                "error",
                f"{arn!r} is not an IAM role or user ARN "
                "(arn:aws:iam::<account>:role/<path/>name or :user/name)",
                where,
            )
    if len(set(arns)) != len(arns):
        yield Finding(
            "error",
            "lists an ARN twice; list each once",
            field_path("kubernetes", "adminPrincipalArns"),
        )


@only_on(scheduler="kubernetes")
def shared_filesystem(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """kubernetes.sharedFilesystem: only where it is built, and only sizes and throughputs the
    service accepts (clusterctl/spec/lustre.py says where each number comes from)."""
    fs = spec.kubernetes.shared_filesystem
    if fs is None:
        return
    where = ("kubernetes", "sharedFilesystem")
    message = unsupported(Feature.SHARED_LUSTRE, spec.cloud, spec.scheduler)
    if message:
        yield Finding("error", message, field_path(*where))
        return
    if not fsx_size_ok(fs.size_gib):
        below, above = fsx_sizes_near(fs.size_gib)
        yield Finding(
            "error",
            f"{fs.size_gib} GiB is not a size FSx for Lustre PERSISTENT_2 makes: 1200, 2400 or a "
            f"multiple of {FSX_SIZE_STEP_GIB} GiB; use {below} or {above}",
            field_path(*where, "sizeGib"),
        )
    if fs.throughput_mbps_per_tib not in FSX_THROUGHPUTS:
        yield Finding(
            "error",
            f"{fs.throughput_mbps_per_tib} MB/s per TiB is not a PERSISTENT_2 throughput tier; "
            f"use one of {', '.join(map(str, FSX_THROUGHPUTS))}",
            field_path(*where, "throughputMbpsPerTib"),
        )
    if len({p.zones[0] if p.zones else None for p in spec.partitions}) > 1:
        yield Finding(
            "warning",
            "the file system lives in one zone, the default partition's; GPU nodes of a "
            "partition in another zone reach it across zones, slower and billed per GB",
            field_path(*where),
        )


RULES: tuple[Rule, ...] = (
    api_server_reach,
    private_api_server,
    private_api_server_routes,
    aks_settings_on_eks,
    aks_authorization,
    aks_entra_sign_in,
    kubernetes_version_supported,
    eks_upgrade_policy,
    aks_upgrade_policy,
    autoscaler_range,
    admin_principals,
    node_group_single_zone,
    capacity_reservation_size,
    reservation_placement,
    capacity_block_options,
    no_capacity_blocks,
    aks_infiniband_registration,
    aks_pool_names,
    kubernetes_node_image,
    kubernetes_fabricless_multinode,
    nccl_image_pinned,
    cluster_autoscaler_pinned,
    shared_filesystem,
)
