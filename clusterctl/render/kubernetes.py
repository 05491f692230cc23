"""The Kubernetes objects a GPU cluster gets, as text: manifests, the NCCL MPIJob, Helm values.

The Pulumi add-on layer (components/k8s/) installs exactly what these functions describe, and
`clusterctl plan --out DIR` writes the same text under DIR/k8s/, so what a reviewer reads is what
the cluster gets. The data behind them is clusterctl/spec/kubernetes.py.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import yaml

from clusterctl import outputs as out
from clusterctl.constants import NCCL_MAX_BYTES, NCCL_MIN_BYTES
from clusterctl.platform import cloud_of
from clusterctl.render.monitoring_k8s import cluster_helm_addons
from clusterctl.render.templates import render_template
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.kubernetes import (
    DEFAULT_STORAGE_CLASS,
    HUGEPAGES_2MI_MIB,
    IB_RESOURCE,
    IB_VF_DEVICE_IDS,
    KUEUE_LOCAL_QUEUE,
    LAUNCHER_RESOURCES,
    MELLANOX_PCI_VENDOR,
    NCCL_TOPOLOGY,
    NFD_MELLANOX_LABEL,
    PEERMEM_LOADER_IMAGE,
    POD_SECURITY_LABEL,
    SHM_SIZE,
    VALIDATION_NAMESPACE,
    cluster_gpu_tolerations,
    fabric_kind,
    gpu_sku,
    mig_resource,
    nccl_launcher,
    node_labels,
    pod_security_level,
    topology_file,
    worker_capabilities,
    worker_resources,
)
from clusterctl.spec.kubernetes_addons import HelmAddon, network_operator_images
from clusterctl.spec.lustre import CLAIM_NAME, FSX_CSI_DRIVER, shared_filesystem, volume_name
from clusterctl.spec.model import ClusterSpec

MPIJOB_NAME = "nccl-tests"
TRAIN_MPIJOB_NAME = "clusterctl-train"
TRAIN_CONFIGMAP = "clusterctl-train"
TRAIN_MOUNT = "/opt/clusterctl-train"
TRAIN_PROGRAM = Path(__file__).parents[1] / "train" / "gpt.py"
"""The training program (clusterctl/train/gpt.py), read when the MPIJob is rendered."""
TRAIN_PROGRAM_FILE = "gpt.py"
TRAIN_MPIRUN = "/usr/local/mpi/bin/mpirun"
"""Open MPI in the NGC PyTorch image (HPC-X's, linked at /usr/local/mpi), by its absolute path:
Open MPI takes that as --prefix, so the workers' orted is found through a plain ssh login."""
TRAIN_IMAGE_ENV = ("PATH", "LD_LIBRARY_PATH")
"""The NGC image's own ENV the ranks need (python3, mpirun, CUDA); sshd-started ranks lack it."""
MPI_HOSTFILE = "/etc/mpi/hostfile"
"""Where the MPI operator (v2beta1) mounts the hostfile in the launcher: one worker a line, in
order, `<worker pod>.<job>.<namespace>.svc slots=N`."""
RDZV_PORT = 29500
RDZV_JOIN_TIMEOUT_S = 120
"""torchrun's c10d rendezvous on the first worker; a worker that cannot join in 120 s fails it
(the same values as the Slurm job, clusterctl/validate/train.py)."""


def _labels(spec: ClusterSpec, stack: str) -> dict[str, str]:
    from clusterctl.spec.tags import k8s_labels  # plain data; no provider import

    return k8s_labels(spec, stack)


def _cloud_tags(spec: ClusterSpec, stack: str) -> dict[str, str]:
    from clusterctl.spec.tags import cloud_tags  # plain data; no provider import

    return cloud_tags(spec, stack)


def cluster_manifests(spec: ClusterSpec, stack: str, cat: Catalog | None = None) -> dict[str, str]:
    """Manifests the program applies after the charts: {file name: YAML text}."""
    cat = cat or catalog()
    labels = _labels(spec, stack)
    kinds = {fabric_kind(p, cat) for p in spec.partitions}
    files = {
        "namespace-nccl-tests.yaml": render_template(
            "k8s/namespace.yaml.j2",
            namespace=VALIDATION_NAMESPACE,
            labels=labels,
            pod_security=nccl_pod_security(spec, cat),
        ),
        "network-policy-nccl-tests.yaml": render_template(
            "k8s/network-policy.yaml.j2", namespace=VALIDATION_NAMESPACE, labels=labels
        ),
    }
    topologies = sorted(
        {t for p in spec.partitions if (t := topology_file(gpu_sku(p, cat), fabric_kind(p, cat)))}
    )
    if topologies:
        files["nccl-topology.yaml"] = topology_configmap(topologies, VALIDATION_NAMESPACE, labels)
    if cloud_of(spec.cloud).kubernetes_default_storage_class:
        files["storage-class.yaml"] = render_template(
            "k8s/ebs-storage-class.yaml.j2",
            class_name=DEFAULT_STORAGE_CLASS,
            labels=labels,
            volume_tags=_cloud_tags(spec, stack),
        )
    if "infiniband" in kinds:
        files["node-feature-rule.yaml"] = render_template(
            "k8s/node-feature-rule.yaml.j2",
            labels=labels,
            label=NFD_MELLANOX_LABEL,
            vendor=MELLANOX_PCI_VENDOR,
            devices=IB_VF_DEVICE_IDS,
        )
        files["nic-cluster-policy.yaml"] = render_template(
            "k8s/nic-cluster-policy.yaml.j2",
            labels=labels,
            label=NFD_MELLANOX_LABEL,
            tolerations=cluster_gpu_tolerations(spec),
            doca_version=network_operator_images(cat)["docaDriver"],
            sriov_version=network_operator_images(cat)["sriovDevicePlugin"],
            sriov_config=json.dumps(
                {
                    "resourceList": [
                        {
                            "resourcePrefix": IB_RESOURCE.split("/")[0],
                            "resourceName": IB_RESOURCE.split("/")[1],
                            "selectors": {
                                "vendors": [MELLANOX_PCI_VENDOR],
                                "linkTypes": ["infiniband"],
                                "isRdma": True,
                            },
                        }
                    ]
                },
                indent=2,
            ),
        )
    if "infiniband" in kinds and spec.kubernetes.gpu_driver == "managed":
        files["nvidia-peermem-loader.yaml"] = render_template(
            "k8s/nvidia-peermem-loader.yaml.j2",
            labels=labels,
            tolerations=cluster_gpu_tolerations(spec),
            image=PEERMEM_LOADER_IMAGE,
        )
    if spec.kubernetes.kueue:
        files["kueue-queues.yaml"] = render_template(
            "k8s/kueue-queues.yaml.j2",
            labels=labels,
            namespace=VALIDATION_NAMESPACE,
            queue=KUEUE_LOCAL_QUEUE,
            cluster_queue=spec.default_partition.name,
            tolerations=cluster_gpu_tolerations(spec),
            partitions=[
                {"name": p.name, "labels": node_labels(p), "resources": kueue_quota(spec, p, cat)}
                for p in spec.partitions
            ],
        )
    return files


def nccl_pod_security(spec: ClusterSpec, cat: Catalog) -> str:
    """The NCCL namespace's Pod Security level: the least every node group's workers pass."""
    levels = {pod_security_level(worker_capabilities(fabric_kind(p, cat))) for p in spec.partitions}
    return "privileged" if "privileged" in levels else "baseline"


def kueue_quota(spec: ClusterSpec, part: Any, cat: Catalog) -> dict[str, str]:
    """A node group's capacity as ClusterQueue quotas: every resource the NCCL job's pods request
    (cpu and memory too: a resource a pod requests that the queue does not cover is never
    admitted), sized to the nodes of the group."""
    sku = gpu_sku(part, cat)
    quota: dict[str, str] = {
        "cpu": str(sku.vcpus * part.nodes),
        "memory": f"{sku.memory_mib * part.nodes}Mi",
    }
    for name, value in worker_resources(sku, fabric_kind(part, cat)).items():
        if name == "memory":
            continue
        if isinstance(value, int):
            quota[name] = str(value * part.nodes)
        else:
            number, unit = _split_quantity(value)
            quota[name] = f"{number * part.nodes}{unit}"
    return quota | _shared_gpu_quota(part, sku.gpus)


def _shared_gpu_quota(part: Any, gpus: int) -> dict[str, str]:
    """What a shared pool's nodes advertise instead of whole GPUs: under the `mixed` MIG strategy
    no `nvidia.com/gpu` at all, one `nvidia.com/mig-<profile>` per slice; with time-slicing
    `nvidia.com/gpu` times the replicas. A quota on whole GPUs would admit no slice request, or
    1/shards of the pool."""
    sharing = part.sharing
    if sharing is None:
        return {}
    if sharing.mig:
        slices = {mig_resource(p): str(n * gpus * part.nodes) for p, n in sharing.mig.items()}
        return {"nvidia.com/gpu": "0", **slices}
    if sharing.shards:
        return {"nvidia.com/gpu": str(gpus * sharing.shards * part.nodes)}
    return {}


def _split_quantity(value: str) -> tuple[int, str]:
    digits = "".join(ch for ch in value if ch.isdigit())
    return int(digits), value[len(digits) :]


def topology_configmap(files: list[str], namespace: str, labels: dict[str, str]) -> str:
    """The ConfigMap the AKS workers mount at TOPOLOGY_MOUNT: NCCL's topology XML per VM family."""
    doc = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "nccl-topology", "namespace": namespace, "labels": dict(labels)},
        "data": {name: nccl_topology_xml(name.removesuffix("-topo.xml")) for name in files},
    }
    header = (
        "# NCCL topology of the ND VMs (which GPU shares a PCIe switch with which HCA), mounted\n"
        "# by the NCCL workers: AKS node images and the nccl-tests image carry no such file.\n"
    )
    return header + str(yaml.dump(doc, Dumper=_BlockDumper, sort_keys=False, width=200))


class _BlockDumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML ships no stubs
    """Multi-line strings as `|` blocks, so a reviewer reads the XML (or a counters file in Helm
    values) as it lands in the file."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def nccl_topology_xml(family: str) -> str:
    """NCCL's topology XML for a VM family, from NCCL_TOPOLOGY (clusterctl/spec/kubernetes.py)."""
    topo = NCCL_TOPOLOGY[family]
    link = f'link_speed="{topo.link_speed}" link_width="16"'
    lines = ['<system version="1">']
    bridge = 0
    for numaid, numa in enumerate(topo.numa):
        lines.append(
            f'  <cpu numaid="{numaid}" affinity="{numa.affinity}" arch="x86_64" '
            f'vendor="{topo.cpu_vendor}" familyid="{topo.cpu_family}" modelid="{topo.cpu_model}">'
        )
        for pairs in numa.switches:
            bridge += 1
            lines.append(f'    <pci busid="ffff:ff:{bridge:02x}.0" class="0x060400" {link}>')
            for gpu, hca in pairs:
                lines.append(f'      <pci busid="{gpu}:00:00.0" class="0x030200" {link}/>')
                lines.append(f'      <pci busid="{hca}:00:00.0" class="0x020700" {link}/>')
            lines.append("    </pci>")
        lines.append("  </cpu>")
    lines.append("</system>")
    return "\n".join(lines) + "\n"


def mpirun_argv(
    launcher: out.NcclLauncher, env: dict[str, str], min_bytes: str, max_bytes: str
) -> list[str]:
    """The launcher's command line: mpirun by its absolute path, the image's own variables and
    every variable the launcher sets forwarded with -x (ranks start through sshd without them)."""
    ranks = int(launcher["workers"]) * int(launcher["slotsPerWorker"])
    argv = [
        launcher.get("mpirun", "mpirun"),
        "--allow-run-as-root",
        "-np",
        str(ranks),
        "--bind-to",
        "none",
    ]
    for name in [*launcher.get("forwardEnv", []), *sorted(env)]:
        argv += ["-x", name]
    binary = launcher.get(out.ALL_REDUCE_PERF, "/opt/nccl-tests/build/all_reduce_perf")
    return [*argv, binary, "-b", min_bytes, "-e", max_bytes, "-f", "2", "-g", "1", "-c", "1",
            "-n", "20", "-w", "5"]  # fmt: skip


def mpijob_manifest(
    launcher: out.NcclLauncher,
    *,
    name: str = MPIJOB_NAME,
    labels: dict[str, str] | None = None,
    min_bytes: str = NCCL_MIN_BYTES,
    max_bytes: str = NCCL_MAX_BYTES,
    deadline_s: int | None = None,
    algorithm: str = "Ring",
) -> str:
    """The NCCL MPIJob for an `ncclLauncher` value: what `validate` creates and `plan --out`
    writes (one template, so the two cannot drift). 2+ workers run NCCL_ALGO=Ring, or with
    `algorithm` `default` NCCL's own choice (NCCL_ALGO unset)."""
    env = {str(k): str(v) for k, v in launcher.get("env", {}).items()}
    if int(launcher["workers"]) > 1:
        env.pop("NCCL_ALGO", None)
        if algorithm != "default":
            env["NCCL_ALGO"] = "Ring"  # the network check: docs/decisions/0002
        # which network NCCL chose and the algorithm it was told, in the launcher's log
        # (clusterctl.nccl.fabric and .algorithm read them)
        env["NCCL_DEBUG"] = "INFO"
        env["NCCL_DEBUG_SUBSYS"] = "INIT,NET,ENV"
        env.pop("NCCL_DEBUG_FILE", None)  # the lines must reach the launcher's log
    return render_template(
        "k8s/nccl-tests-mpijob.yaml.j2",
        job_name=name,
        launcher=launcher,
        labels={"app.kubernetes.io/managed-by": "clusterctl", "gpu-clusters/validation": "nccl",
                **(labels or {})},
        env=env,
        argv=mpirun_argv(launcher, env, min_bytes, max_bytes),
        launcher_resources=LAUNCHER_RESOURCES,
        shm_size=launcher.get("shmSize", SHM_SIZE),
        topology=launcher.get("topology"),
        deadline_s=deadline_s,
    )  # fmt: skip


def mpijob_prerequisites(launcher: out.NcclLauncher) -> list[dict[str, Any]]:
    """Objects the MPIJob needs in its cluster: its namespace and, on AKS, the topology ConfigMap.
    The stacks apply them with the cluster; `validate` applies them too (idempotent), so a cluster
    made elsewhere (`--kubeconfig`) gets them."""
    ns = launcher["namespace"]
    labels = {"app.kubernetes.io/managed-by": "clusterctl"}
    ns_labels = {**labels, POD_SECURITY_LABEL: pod_security_level(launcher["capabilities"])}
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": ns_labels}}
    ]
    topology = launcher.get("topology")
    if topology:
        docs += load_manifest_docs(topology_configmap([topology["file"]], ns, labels))
    return docs


def nccl_mpijob(spec: ClusterSpec, stack: str, cat: Catalog | None = None) -> str:
    """The NCCL all_reduce_perf MPIJob that `clusterctl validate` launches (not applied by up)."""
    cat = cat or catalog()
    nccl = spec.validation.nccl
    return mpijob_manifest(
        nccl_launcher(spec, stack, cat),
        labels=_labels(spec, stack),
        min_bytes=nccl.min_bytes,
        max_bytes=nccl.max_bytes,
        deadline_s=nccl.timeout_minutes * 60,
    )


def eks_gpu_node_user_data(efa: bool) -> str:
    """The GPU launch template's user data: with EFA, a script reserving the 2 MiB huge pages
    the worker requests (before nodeadm starts kubelet); then a MIME part for nodeadm putting
    containerd and kubelet on the instance-store NVMe (RAID0) (docs/decisions/0003)."""
    return render_template(
        "k8s/eks-gpu-node-userdata.mime.j2",
        boundary="GPUCLUSTERS",
        hugepages_2mi=HUGEPAGES_2MI_MIB // 2 if efa else 0,
    )


def values_file(addon: HelmAddon) -> str:
    pin = addon.pin
    repo = f" --repo {pin.repo}" if pin.repo else ""
    header = (
        f"# Helm values of release '{addon.release}' in namespace '{addon.namespace}':\n"
        f"#   helm upgrade --install {addon.release} {pin.chart}{repo} --version {pin.version} \\\n"
        f"#     -n {addon.namespace} --create-namespace -f {addon.release}.values.yaml\n"
    )
    return header + str(
        yaml.dump(addon.values, Dumper=_BlockDumper, sort_keys=True, default_flow_style=False)
    )


def load_manifest_docs(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def k8s_image(ref: str) -> str:
    """An image reference as Kubernetes spells it: pyxis/enroot write the registry with '#'
    (`nvcr.io#nvidia/pytorch:TAG`), a container runtime with '/' (`nvcr.io/nvidia/pytorch:TAG`)."""
    registry, sep, rest = ref.partition("#")
    return f"{registry}/{rest}" if sep else ref


def training_image(cat: Catalog | None = None) -> str:
    """config/versions.yaml `training.container.image`, as Kubernetes spells it."""
    cat = cat or catalog()
    image = ((cat.versions.get("training") or {}).get("container") or {}).get("image")
    if not image:
        raise ValueError("config/versions.yaml has no training.container.image")
    return k8s_image(str(image))


def train_mpirun_argv(
    launcher: out.NcclLauncher, env: dict[str, str], args: list[str], *, name: str
) -> list[str]:
    """The launcher's mpirun: one process per worker, each torchrun starting one training process
    per GPU. RDZV_HEAD stands for the first worker's address, which the launcher reads from the
    hostfile when it starts (train_mpijob_manifest puts it in)."""
    workers = int(launcher["workers"])
    argv = [TRAIN_MPIRUN, "--allow-run-as-root", "--hostfile", MPI_HOSTFILE, "-np", str(workers),
            "--map-by", "ppr:1:node", "--bind-to", "none"]  # fmt: skip
    for var in [*TRAIN_IMAGE_ENV, *sorted(env)]:
        argv += ["-x", var]
    return [
        *argv,
        "python3", "-m", "torch.distributed.run", f"--nnodes={workers}",
        f"--nproc-per-node={int(launcher['slotsPerWorker'])}", "--rdzv-backend=c10d",
        f"--rdzv-endpoint={RDZV_HEAD}:{RDZV_PORT}", f"--rdzv-id={name}",
        f"--rdzv-conf=join_timeout={RDZV_JOIN_TIMEOUT_S}", "--max-restarts=0",
        f"{TRAIN_MOUNT}/{TRAIN_PROGRAM_FILE}", *args,
    ]  # fmt: skip


RDZV_HEAD = "@HEAD@"


def train_mpijob_manifest(
    launcher: out.NcclLauncher,
    *,
    image: str,
    program: str,
    args: list[str],
    name: str = TRAIN_MPIJOB_NAME,
    labels: dict[str, str] | None = None,
    deadline_s: int | None = None,
) -> str:
    """The training job for an `ncclLauncher` value, as two YAML documents: the ConfigMap that
    carries the training program and the MPIJob that runs it (slotsPerWorker 1: one torchrun per
    worker, which starts a process per GPU). What `validate --train` applies and creates and
    what `plan --out` writes (one function, one template, so the two cannot drift)."""
    env = {str(k): str(v) for k, v in launcher.get("env", {}).items()}
    labels = {"app.kubernetes.io/managed-by": "clusterctl", "gpu-clusters/validation": "train",
              **(labels or {})}  # fmt: skip
    argv = train_mpirun_argv(launcher, env, args, name=name)
    line = " ".join(shlex.quote(a) for a in argv).replace(RDZV_HEAD, '"$head"')
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": TRAIN_CONFIGMAP,
            "namespace": launcher["namespace"],
            "labels": dict(labels),
        },
        "data": {TRAIN_PROGRAM_FILE: program},
    }
    job = render_template(
        "k8s/train-mpijob.yaml.j2",
        job_name=name,
        launcher=launcher,
        image=image,
        labels=labels,
        env=env,
        mpirun=line,
        hostfile=MPI_HOSTFILE,
        configmap=TRAIN_CONFIGMAP,
        mount=TRAIN_MOUNT,
        launcher_resources=LAUNCHER_RESOURCES,
        shm_size=launcher.get("shmSize", SHM_SIZE),
        topology=launcher.get("topology"),
        deadline_s=deadline_s,
    )
    header = (
        f"# The training program `clusterctl validate --train` runs (clusterctl/train/gpt.py),\n"
        f"# mounted by the workers of the MPIJob below at {TRAIN_MOUNT}.\n"
    )
    return (
        header + str(yaml.dump(configmap, Dumper=_BlockDumper, sort_keys=False, width=200))
        + "---\n" + job
    )  # fmt: skip


def train_mpijob(spec: ClusterSpec, stack: str, cat: Catalog | None = None) -> str:
    """The training MPIJob (and its program's ConfigMap) `clusterctl validate --train` creates on
    the default node group: the GPU preset of clusterctl.train.model (not applied by up)."""
    from clusterctl.train.model import PRESETS

    cat = cat or catalog()
    return train_mpijob_manifest(
        nccl_launcher(spec, stack, cat),
        image=training_image(cat),
        program=TRAIN_PROGRAM.read_text(),
        args=train_args(PRESETS["gpu"].argv()),
        labels=_labels(spec, stack),
        deadline_s=TRAIN_TIMEOUT_MINUTES * 60,
    )


TRAIN_TIMEOUT_MINUTES = 20
"""The job's deadline as `validate --train` sets it by default (TrainOptions.timeout_minutes)."""
TRAIN_COLLECTIVE_TIMEOUT_S = 90
"""gpt.py --timeout: how long a rank waits in a collective for a peer that stopped (the Slurm
job's COLLECTIVE_TIMEOUT_S, clusterctl/validate/train.py)."""


def train_args(preset_argv: list[str]) -> list[str]:
    return [*preset_argv, "--timeout", str(TRAIN_COLLECTIVE_TIMEOUT_S)]


FILLED_AT_UP = "set-at-up-from-the-file-system"
"""What `plan --out` writes where the file system's id, DNS name and mount name go: the program
fills them from the FSx resource's outputs when it applies the volume."""


def shared_volume_docs(
    spec: ClusterSpec,
    stack: str,
    *,
    file_system_id: Any = FILLED_AT_UP,
    dns_name: Any = FILLED_AT_UP,
    mount_name: Any = FILLED_AT_UP,
) -> list[dict[str, Any]]:
    """kubernetes.sharedFilesystem as a static PersistentVolume (FSx CSI, ReadWriteMany, never
    deleted by Kubernetes: Retain) bound to one claim in the training namespace, so a pod mounts
    it by `claimName: shared`. The three values are Pulumi outputs in the program, placeholders
    in `plan --out`."""
    fs = shared_filesystem(spec)
    if fs is None:
        return []
    labels = _labels(spec, stack)
    pv = volume_name(spec, stack)
    size = f"{fs.size_gib}Gi"
    return [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv, "labels": dict(labels)},
            "spec": {
                "capacity": {"storage": size},
                "volumeMode": "Filesystem",
                "accessModes": ["ReadWriteMany"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "mountOptions": ["flock"],
                "claimRef": {"namespace": VALIDATION_NAMESPACE, "name": CLAIM_NAME},
                "csi": {
                    "driver": FSX_CSI_DRIVER,
                    "volumeHandle": file_system_id,
                    "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name},
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": CLAIM_NAME,
                "namespace": VALIDATION_NAMESPACE,
                "labels": dict(labels),
            },
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "",
                "volumeName": pv,
                "resources": {"requests": {"storage": size}},
            },
        },
    ]


def shared_volume_manifest(spec: ClusterSpec, stack: str) -> str:
    header = (
        "# kubernetes.sharedFilesystem: the FSx for Lustre file system as a static volume and\n"
        f"# its claim; pods of {VALIDATION_NAMESPACE} mount it with claimName: {CLAIM_NAME}.\n"
        "# The program puts the file system's id, DNS name and mount name where this says\n"
        f"# {FILLED_AT_UP}.\n"
    )
    docs = shared_volume_docs(spec, stack)
    return header + "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)


def render_k8s_bundle(spec: ClusterSpec, stack: str) -> dict[str, str]:
    """Every manifest and Helm values file the cluster gets, keyed by path under k8s/."""
    cat = catalog()
    files = {
        f"manifests/{name}": text for name, text in cluster_manifests(spec, stack, cat).items()
    }
    if shared_filesystem(spec) is not None:
        files["manifests/shared-filesystem.yaml"] = shared_volume_manifest(spec, stack)
    files["validation/nccl-tests-mpijob.yaml"] = nccl_mpijob(spec, stack, cat)
    files["validation/train-mpijob.yaml"] = train_mpijob(spec, stack, cat)
    for addon in cluster_helm_addons(spec, stack, cat):
        files[f"helm/{addon.release}.values.yaml"] = values_file(addon)
    return files
