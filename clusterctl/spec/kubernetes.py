"""What a Kubernetes GPU cluster gets on top of its cloud: pure functions from spec to data.

The Pulumi add-on layer (components/k8s/) installs exactly the Helm releases and manifests these
functions describe, and `clusterctl plan --out DIR` writes the same text under DIR/k8s/, so what
a reviewer reads is what the cluster gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clusterctl import outputs as out
from clusterctl.platform import cloud_of
from clusterctl.spec.catalog import Catalog, Sku, catalog
from clusterctl.spec.mig import place
from clusterctl.spec.model import ClusterSpec, PartitionSpec
from clusterctl.spec.topology import ScaleSet, scale_sets_of

DEFAULT_KUBERNETES_VERSION = "1.35"
VALIDATION_NAMESPACE = "nccl-tests"
PARTITION_LABEL = "gpu-clusters/partition"
FABRIC_LABEL = "gpu-clusters/fabric"
"""On a partition split into several AKS pools: the pool's fabric (its scale set's name)."""
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def spot_toleration(cloud: str) -> dict[str, str] | None:
    """The toleration of the cloud's spot-node taint, or None where spot nodes carry none."""
    taint = cloud_of(cloud).kubernetes_spot_taint
    if taint is None:
        return None
    key, value, effect = taint
    return {"key": key, "operator": "Equal", "value": value, "effect": effect}


def gpu_tolerations(cloud: str, spot: bool) -> list[dict[str, str]]:
    """What every pod meant for a GPU node tolerates: the GPU taint, and on spot nodes the
    cloud's spot taint (AKS), without which no driver, DOCA driver or worker lands there."""
    extra = spot_toleration(cloud) if spot else None
    return [GPU_TOLERATION, *([extra] if extra else [])]


def cluster_gpu_tolerations(spec: ClusterSpec) -> list[dict[str, str]]:
    """The tolerations of the cluster-wide GPU add-ons (driver, device plugins, NicClusterPolicy,
    Kueue's flavours): the spot taint's too as soon as one node group is spot."""
    return gpu_tolerations(spec.cloud, any(p.spot for p in spec.partitions))


IB_RESOURCE = "rdma/ib"
"""SR-IOV device plugin resource, one per InfiniBand VF (Azure/aks-rdma-infiniband `configs/
nicclusterpolicy/sriov-device-plugin`): a worker asks for all 8 and gets each HCA exclusively."""
EFA_RESOURCE = "vpc.amazonaws.com/efa"
AKS_INFINIBAND_FEATURE = ("Microsoft.ContainerService", "AKSInfinibandSupport")


FALLBACK_SRIOV_DEVICE_PLUGIN = "network-operator-v26.4.1"
FALLBACK_DOCA_DRIVER = "doca3.4.1-26.04-1.1.0.0-1"
"""Used only where config/versions.yaml has no helmCharts.networkOperator.components: the
doca-driver and SR-IOV device plugin tags of network-operator v26.4.1 (its hack/release.yaml)."""
PEERMEM_LOADER_IMAGE = "mcr.microsoft.com/mirror/docker/library/ubuntu:24.04"

MPI_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
"""The images run as root; Open MPI refuses that without these (set once, in the launcher env)."""
TOPOLOGY_CONFIGMAP = "nccl-topology"
TOPOLOGY_MOUNT = "/opt/nvidia-topology"
"""Where the workers see the NCCL topology ConfigMap (the path Azure/aks-rdma-infiniband's MPIJob
mounts its `nvidia-topology` ConfigMap at)."""
TOPOLOGY_FAMILY = {"ndv5": "ndv5", "ndv4": "ndv4"}
"""VM NCCL profile -> the Azure topology family whose file the ConfigMap carries."""


@dataclass(frozen=True)
class NumaTopology:
    affinity: str
    switches: tuple[tuple[tuple[str, str], ...], ...]
    """Per PCIe switch, its (GPU PCI domain, HCA PCI domain) pairs: each GPU shares a switch with
    the HCA NCCL should pair it with."""


@dataclass(frozen=True)
class VmTopology:
    cpu_vendor: str
    cpu_family: int
    cpu_model: int
    link_speed: str
    numa: tuple[NumaTopology, ...]


# The PCI layout of the ND VMs as NCCL needs it (which GPU and HCA share a PCIe switch, under which
# NUMA node), facts read from Azure/azhpc-images topology/ndv5-topo.xml and ndv4-topo.xml (the files
# the HPC image installs under /opt/microsoft;
# tests/unit/render/test_nccl_topology_reference.py checks them against copies in
# tests/data/azhpc-topology). nccl_topology_xml() writes NCCL's topology XML
# from it for the ConfigMap the AKS workers mount. GPUs are PCI class 0x0302, HCAs 0x0207 (the VFs
# 15b3:101e on ND H100 v5, 15b3:101c on ND A100 v4).
NCCL_TOPOLOGY: dict[str, VmTopology] = {
    "ndv5": VmTopology(
        "GenuineIntel", 6, 143, "32.0 GT/s PCIe",
        (
            # NUMA 0 = CPUs 0-47: azhpc-images commit 992d775 corrected the masks once swapped
            NumaTopology("00000000,0000ffff,ffffffff", (
                (("0001", "0101"),), (("0002", "0102"),), (("0003", "0103"),), (("0008", "0104"),),
            )),
            NumaTopology("ffffffff,ffff0000,00000000", (
                (("0009", "0105"),), (("000a", "0106"),), (("000b", "0107"),), (("000c", "0108"),),
            )),
        ),
    ),
    "ndv4": VmTopology(
        "AuthenticAMD", 23, 49, "16 GT/s",
        (
            NumaTopology("00000000,00000000,00ffffff", ((("0003", "0103"), ("0004", "0104")),)),
            NumaTopology("00000000,0000ffff,ff000000", ((("0001", "0101"), ("0002", "0102")),)),
            NumaTopology("000000ff,ffff0000,00000000", ((("000d", "0107"), ("000e", "0108")),)),
            NumaTopology("ffffff00,00000000,00000000", ((("000b", "0105"), ("000c", "0106")),)),
        ),
    ),
}  # fmt: skip
MELLANOX_PCI_VENDOR = "15b3"
IB_VF_DEVICE_IDS = ("101c", "101e")
"""The InfiniBand VFs ND A100 v4 (101c, ConnectX-6) and ND H100 v5 (101e, ConnectX-7) VMs show;
Azure/aks-rdma-infiniband's NodeFeatureRule matches exactly these device ids."""
NFD_MELLANOX_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
"""The label the NicClusterPolicy selects on; with the chart's rules off only our rule sets it."""
SHM_SIZE = "16Gi"
SHM_SIZE_MIB = 16 * 1024
HUGEPAGES_2MI_MIB = 5120
"""2 MiB huge pages an EFA worker requests (awsome-distributed-training nccl-tests asks
hugepages-2Mi: 5120Mi for libfabric's EFA provider); the EKS GPU node's user data reserves them
(templates/k8s/eks-gpu-node-userdata.mime.j2)."""
WORKER_MEMORY_MIB = 32000
"""The worker's own memory (awsome's nccl-tests MPIJob asks 32000Mi), before /dev/shm."""
LAUNCHER_RESOURCES = {"cpu": "500m", "memory": "512Mi"}
KUEUE_LOCAL_QUEUE = "nccl-tests"
POD_SECURITY_LABEL = "pod-security.kubernetes.io/enforce"
BASELINE_CAPABILITIES = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
})  # fmt: skip
"""The capabilities a container may add under the Pod Security Standards' `baseline` level
(kubernetes.io, "Pod Security Standards", Baseline, Capabilities). IPC_LOCK is not one."""


def worker_capabilities(kind: str) -> list[str]:
    """What an NCCL/training worker adds: IPC_LOCK on an RDMA fabric (memory registration)."""
    return ["IPC_LOCK"] if kind in ("efa", "infiniband") else []


def pod_security_level(capabilities: list[str] | tuple[str, ...]) -> str:
    """The least Pod Security level the NCCL/training pods pass. They use no host namespace,
    host path or privileged mode, run as root (so never `restricted`), and add only
    `capabilities`: `baseline` unless one is outside its list (IPC_LOCK, which RDMA's memory
    registration needs on EFA and InfiniBand workers), then `privileged`."""
    return "baseline" if set(capabilities) <= BASELINE_CAPABILITIES else "privileged"


DEFAULT_STORAGE_CLASS = "gp3-encrypted"


def kubernetes_version(spec: ClusterSpec, cat: Catalog) -> str:
    """The spec's version, else versions.yaml `kubernetes.eks` / `kubernetes.aks`."""
    if spec.kubernetes.version:
        return spec.kubernetes.version
    entry = (cat.versions.get("kubernetes") or {}).get(cloud_of(spec.cloud).kubernetes_service)
    if isinstance(entry, dict) and entry.get("version"):
        return str(entry["version"])
    return DEFAULT_KUBERNETES_VERSION


def eks_release_parameter(cat: Catalog, role: str, version: str) -> str:
    """The SSM public parameter holding the newest AMI release of `role` (gpuNodes, systemNodes)
    for this Kubernetes version: config/images.yaml aws.<role>.releaseVersionSsmParameter."""
    entry = (cat.images.get("aws") or {}).get(role) or {}
    template = entry.get("releaseVersionSsmParameter")
    if not template:
        raise LookupError(f"config/images.yaml aws.{role} has no releaseVersionSsmParameter")
    return str(template).format(kubernetesVersion=version)


AKS_UPGRADE_CHANNEL = "patch"
"""AKS moves the cluster to each new patch of its minor version (security fixes), in the window."""
AKS_NODE_OS_UPGRADE_CHANNEL = "NodeImage"
"""AKS's default (a weekly node image with the OS patches), now only inside the window."""
MAINTENANCE_WINDOW = {"dayOfWeek": "Sunday", "startTime": "00:00", "utcOffset": "+00:00",
                      "durationHours": 4}  # fmt: skip
"""The one weekly window AKS may upgrade or reimage nodes in: Sunday 00:00-04:00 UTC (4 hours is
the shortest AKS accepts for its managed schedules)."""
EKS_SUPPORT_TYPE = "STANDARD"
"""Used where config/versions.yaml kubernetes.eks has no supportType: never drift into paid
extended support; EKS upgrades the control plane at the end of standard support instead."""


def eks_support_type(cat: Catalog) -> str:
    entry = (cat.versions.get("kubernetes") or {}).get("eks") or {}
    return str(entry.get("supportType") or EKS_SUPPORT_TYPE)


def reserved_capacity(part: PartitionSpec) -> bool:
    """The node group runs in a capacity reservation (ODCR) or a capacity block."""
    return bool(part.capacity_block or part.capacity_reservation_id)


def autoscaled_min(part: PartitionSpec) -> int:
    """The cluster autoscaler's minimum for a GPU node group: minNodes (default 0), except in
    reserved capacity, which bills whether used or not (and a block's nodes cannot come back
    once given up): there the group stays at `nodes`."""
    return part.nodes if reserved_capacity(part) else part.min_nodes


AUTOSCALER_IDLE_MINUTES = 10
"""The cluster autoscaler removes a node its pods no longer need after 10 minutes (its
--scale-down-unneeded-time default, and AKS's scale-down-unneeded-time default); set explicitly
on both, so the plan's idle message stays true."""
NODE_PROVISION_MINUTES = 25
"""How long a new GPU node may take to join and turn Ready (an ND VM can take 20 minutes): the
autoscaler's max-node-provision-time, and part of validate's start window at zero nodes."""
CLUSTER_AUTOSCALER_NAMESPACE = "cluster-autoscaler"
NODE_REASON_ANNOTATION = "gpu-clusters/nccl-suspect-reason"
"""Why `clusterctl validate` took a node out (clusterctl/validate/k8s_nodes.py); Prometheus'
kube-state-metrics exports it with the node's cordon (clusterctl/render/monitoring_k8s.py)."""
CLUSTER_AUTOSCALER_SERVICE_ACCOUNT = "cluster-autoscaler"
"""The EKS cluster autoscaler's service account: the only one EKS Pod Identity gives its role."""


def eks_cluster_name(spec: ClusterSpec, stack: str) -> str:
    return f"{spec.name}-{stack}"


def autoscaler_node_template(
    part: PartitionSpec, cat: Catalog, labels: dict[str, str]
) -> list[tuple[str, str, str]]:
    """(kind, name, value) of what the cluster autoscaler must be told about a GPU node group at
    zero nodes, where it has no node to copy: the labels, the GPU taint and every extended
    resource the NCCL worker requests. Without them it sees no group a pending worker fits and
    never scales up (kubernetes/autoscaler cloudprovider/aws and azure README, "scaling from 0").
    CPU, memory and the GPU count it reads from the instance type; the GPUs are listed anyway."""
    items = [("label", k, v) for k, v in {**labels, **node_labels(part)}.items()]
    items.append(("taint", GPU_TAINT["key"], f"{GPU_TAINT['value']}:{GPU_TAINT['effect']}"))
    sku = gpu_sku(part, cat)
    spot_taint = cloud_of(sku.cloud).kubernetes_spot_taint if part.spot else None
    if spot_taint:
        key, value, effect = spot_taint
        items.append(("taint", key, f"{value}:{effect}"))
    resources = worker_resources(sku, fabric_kind(part, cat))
    items += [("resources", k, str(v)) for k, v in resources.items() if k != "memory"]
    return items


def eks_node_template_tags(items: list[tuple[str, str, str]]) -> dict[str, str]:
    """As tags on the node group's Auto Scaling group (EKS does not copy node group tags there)."""
    return {f"k8s.io/cluster-autoscaler/node-template/{kind}/{name}": v for kind, name, v in items}


def aks_node_template_tags(items: list[tuple[str, str, str]]) -> dict[str, str]:
    """As tags on the node pool (AKS puts them on its scale set). Azure tag names allow no '/',
    so it is written '_', and a '_' of the name '~2' (the autoscaler's azure README)."""
    return {
        f"k8s.io_cluster-autoscaler_node-template_{kind}_"
        + name.replace("_", "~2").replace("/", "_"): value
        for kind, name, value in items
    }


def gpu_sku(part: PartitionSpec, cat: Catalog) -> Sku:
    return cat.require(part.sku, field="partitions[].sku")


def fabric_kind(part: PartitionSpec, cat: Catalog) -> str:
    sku = gpu_sku(part, cat)
    return "none" if part.fabric == "none" else sku.fabric.kind


MIG_CONFIG_LABEL = "nvidia.com/mig.config"
"""The node label the GPU Operator's MIG manager reads: the name of a mig-parted config to apply
(NVIDIA GPU Operator docs, "GPU Operator with MIG"); nodes without it get the ClusterPolicy's
`migManager.config.default` (all-disabled)."""
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
"""The node label the GPU Operator's device plugin reads: the key of its config in the
devicePlugin.config ConfigMap (NVIDIA GPU Operator docs, "Time-Slicing GPUs in Kubernetes")."""
MIG_PARTED_CONFIGMAP = "gpucl-mig-parted"
DEVICE_PLUGIN_CONFIGMAP = "gpucl-device-plugin"
MIG_STRATEGY = "mixed"
"""`mixed` for every layout: the strategy is one per cluster (the ClusterPolicy's `mig.strategy`),
`single` would advertise a slice as `nvidia.com/gpu`, the very resource whole-GPU pools and the
NCCL MPIJob use, and a layout of two profiles needs `mixed` anyway. With `mixed` a slice is
`nvidia.com/mig-<profile>` (k8s-device-plugin README, "MIG strategies") on every pool alike."""


def sharing_config_name(part: PartitionSpec) -> str:
    """The mig-parted config (MIG) or device-plugin config (shards) a sharing pool's nodes name
    in their label."""
    return f"gpucl-{part.name}"


def node_labels(part: PartitionSpec) -> dict[str, str]:
    """The partition label, and on a pool whose GPUs are shared the label that picks its MIG
    layout (MIG manager) or its time-slicing config (device plugin)."""
    labels = {PARTITION_LABEL: part.name}
    if part.sharing and part.sharing.mig:
        labels[MIG_CONFIG_LABEL] = sharing_config_name(part)
    elif part.sharing and part.sharing.shards:
        labels[DEVICE_PLUGIN_CONFIG_LABEL] = sharing_config_name(part)
    return labels


def mig_resource(profile: str) -> str:
    """The extended resource a pod requests for one slice under the `mixed` strategy."""
    return f"nvidia.com/mig-{profile}"


AKS_GPU_INSTANCE_PROFILES = ("MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g")
"""pulumi-azure-native AgentPool `gpuInstanceProfile` (enum GPUInstanceProfile). AKS cuts every
GPU into as many instances of the smallest `<N>g` profile as fit, one profile per pool
(MicrosoftDocs aks/gpu-multi-instance.md: MIG1g = 1g.5gb x7 on an A100 40GB), and only on a pool
whose driver AKS installs: Azure/AgentBaker's cse_main.sh runs its mig-partition service inside
`if GPU_NODE && skip_nvidia_driver_install != true`."""


def aks_gpu_instance_profile(part: PartitionSpec, cat: Catalog) -> str | None:
    """The pool's `gpuInstanceProfile` where it says the whole layout: one profile, the smallest
    of its compute size, as many instances as fit one GPU. None: the layout needs the MIG
    manager (or the pool shares no GPU by MIG)."""
    if not (part.sharing and len(part.sharing.mig) == 1):
        return None
    gpu = cat.mig(gpu_sku(part, cat))
    ((name, count),) = part.sharing.mig.items()
    profile = gpu.profile(name) if gpu else None
    if gpu is None or profile is None:
        return None
    same_size = [p for p in gpu.profiles if p.compute_slices == profile.compute_slices]
    if profile != min(same_size, key=lambda p: p.memory_slices):
        return None
    if place(gpu, {name: count + 1}) is not None:  # AKS would make more than the layout asks
        return None
    aks = f"MIG{profile.compute_slices}g"
    return aks if aks in AKS_GPU_INSTANCE_PROFILES else None


def partition_pools(part: PartitionSpec) -> list[ScaleSet]:
    """A partition's AKS pools: one per InfiniBand fabric, at most maxNodesPerScaleSet (100) nodes
    each. An AKS pool is a VM scale set, and a scale set's VMs share one fabric only within
    one placement group of 100 VMs (clusterctl/spec/topology.py), so a bigger pool would hold
    nodes that cannot reach each other over InfiniBand."""
    return scale_sets_of(part.name, part.nodes, part.max_nodes_per_scale_set)


def pool_labels(part: PartitionSpec, pool: ScaleSet) -> dict[str, str]:
    """The partition label, and where the partition has several pools, the pool's fabric: a
    multi-node job selects one fabric (`gpu-clusters/fabric`) to stay on one InfiniBand."""
    labels = node_labels(part)
    if len(partition_pools(part)) > 1:
        labels[FABRIC_LABEL] = pool.name
    return labels


def pool_minimum(part: PartitionSpec, pool: ScaleSet) -> int:
    """The autoscaler's minimum of one pool: the partition's, filled into the pools in order."""
    before = sum(p.size for p in partition_pools(part)[: pool.index])
    return max(0, min(pool.size, autoscaled_min(part) - before))


def nccl_image(spec: ClusterSpec, cat: Catalog) -> str:
    if spec.validation.nccl.container_image:
        return spec.validation.nccl.container_image
    return default_nccl_image(spec.cloud, cat)


def default_nccl_image(cloud: str, cat: Catalog) -> str:
    images = cat.images.get("ncclTests") or {}
    return images.get(cloud) or cloud_of(cloud).nccl_tests_image


def nccl_env(sku: Sku, fabric: str, cat: Catalog) -> dict[str, str]:
    """The NCCL and MPI environment of the MPIJob's launcher for this SKU on Kubernetes.

    Every variable once (a dict): the MPIJob CRD keys container env by name (a list-map), and the
    API server refuses a name given twice (docs/decisions/0003). On AKS the `aks-ib` profile
    replaces the VM profile: AKS node images and the nccl-tests image have no /opt/microsoft
    topology file, so NCCL_TOPO_FILE points at the topology ConfigMap mounted at TOPOLOGY_MOUNT.
    """
    name = sku.nccl_profile
    if fabric == "infiniband":  # (InfiniBand sizes are Azure's; AWS has EFA)
        name = "aks-ib" if "aks-ib" in cat.nccl_profiles else name
    profile = cat.nccl_profiles.get(name) if name else None
    env = {**MPI_ROOT_ENV, **(dict(profile.env) if profile else {})}
    topology = topology_file(sku, fabric)
    if topology:
        env["NCCL_TOPO_FILE"] = f"{TOPOLOGY_MOUNT}/{topology}"
        # GPUDirect RDMA between any GPU and HCA, as Azure's own MPIJob sets it
        # (Azure/aks-rdma-infiniband tests/scenarios/k8s, nccl-env-vars ConfigMap + mpi-job.yaml).
        env["NCCL_NET_GDR_LEVEL"] = "SYS"
    return env


def topology_file(sku: Sku, fabric: str) -> str | None:
    """The NCCL topology file (a key of the nccl-topology ConfigMap) for an Azure IB SKU."""
    if fabric != "infiniband":
        return None
    family = TOPOLOGY_FAMILY.get(sku.nccl_profile or "")
    return f"{family}-topo.xml" if family else None


def worker_resources(sku: Sku, fabric: str) -> dict[str, Any]:
    """Per-node requests (= limits) of one NCCL worker that takes a whole node.

    memory covers the worker's own use and the /dev/shm memory emptyDir (SHM_SIZE), which the
    kernel charges to the pod's memory cgroup (docs/decisions/0003).
    """
    res: dict[str, Any] = {"nvidia.com/gpu": sku.gpus}
    if fabric == "efa":
        res[EFA_RESOURCE] = sku.fabric.nics
        res["hugepages-2Mi"] = f"{HUGEPAGES_2MI_MIB}Mi"
    elif fabric == "infiniband":
        res[IB_RESOURCE] = sku.fabric.nics
    res["memory"] = f"{WORKER_MEMORY_MIB + SHM_SIZE_MIB}Mi"
    return res


def launcher_for(
    sku: Sku,
    workers: int,
    cat: Catalog,
    *,
    fabric: str | None = None,
    image: str | None = None,
    partition: str | None = None,
    node_selector: dict[str, str] | None = None,
    queue: str | None = None,
    spot: bool = False,
) -> out.NcclLauncher:
    """The one `ncclLauncher` value: a stack's output (nccl_launcher) and the launcher for a
    cluster made elsewhere (`validate --kubeconfig --sku --nodes`) are built here."""
    kind = fabric or sku.fabric.kind
    launcher: out.NcclLauncher = {
        "namespace": VALIDATION_NAMESPACE,
        "sku": sku.name,
        "workers": workers,
        "slotsPerWorker": sku.gpus,
        "fabric": kind,
        "image": image or default_nccl_image(sku.cloud, cat),
        out.ALL_REDUCE_PERF: cloud_of(sku.cloud).nccl_tests_binary,
        "mpirun": cloud_of(sku.cloud).mpirun,
        # Ranks that mpirun starts through the workers' sshd get none of the image's ENV
        "forwardEnv": list(cloud_of(sku.cloud).forward_env),
        "nodeSelector": dict(node_selector or {}),
        "tolerations": gpu_tolerations(sku.cloud, spot),
        "resources": worker_resources(sku, kind),
        "capabilities": worker_capabilities(kind),
        "env": nccl_env(sku, kind, cat),
        "shmSize": SHM_SIZE,
        "mpiJobApiVersion": "kubeflow.org/v2beta1",
    }
    topology = topology_file(sku, kind)
    if topology:
        launcher["topology"] = {
            "configMap": TOPOLOGY_CONFIGMAP,
            "mountPath": TOPOLOGY_MOUNT,
            "file": topology,
        }
    if partition:
        launcher["partition"] = partition
    if queue:
        launcher["queue"] = queue
    return launcher


def nccl_launcher(spec: ClusterSpec, stack: str, cat: Catalog | None = None) -> out.NcclLauncher:
    """What the NCCL validation needs to launch an MPIJob here: the `ncclLauncher` stack output."""
    cat = cat or catalog()
    part = spec.default_partition
    # On a partition split into several fabrics the check runs on the first one: a ring across
    # fabrics has no InfiniBand path between them.
    first = partition_pools(part)[0] if cloud_of(spec.cloud).gpu_scale_sets else None
    return launcher_for(
        gpu_sku(part, cat),
        first.size if first else part.nodes,
        cat,
        fabric=fabric_kind(part, cat),
        image=nccl_image(spec, cat),
        partition=part.name,
        node_selector=pool_labels(part, first) if first else node_labels(part),
        queue=KUEUE_LOCAL_QUEUE if spec.kubernetes.kueue else None,
        spot=part.spot,
    )
