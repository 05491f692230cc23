"""The Kubernetes clusters work once deployed, not only `pulumi up` succeeds.

Each test names its item. What the workers and the launcher get is read from the objects the
program applies (the plan under mocks) and the MPIJob `clusterctl validate` creates from the
stack's own `ncclLauncher` output (build_mpijob), so both paths are covered.
"""

from __future__ import annotations

import base64
import email
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from clusterctl.render.kubernetes import render_k8s_bundle
from clusterctl.validate.k8s_launcher import build_mpijob
from clusterctl.validate.targets import launcher_for_sku
from tests.conftest import plan_stack, resources

NFR = "kubernetes:nfd.k8s-sigs.io/v1alpha1:NodeFeatureRule"
NIC_POLICY = "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"
NG = "aws:eks/nodeGroup:NodeGroup"
PG = "aws:ec2/placementGroup:PlacementGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ENTRY = "aws:eks/accessEntry:AccessEntry"
RESERVATION = "cr-0abc1234def567890"

# PCI functions an ND VM shows (lspci -n): the InfiniBand VFs (class 0207) and a GPU (10de).
ND_H100_V5_HCA = {"vendor": "15b3", "device": "101e", "class": "0207"}
ND_A100_V4_HCA = {"vendor": "15b3", "device": "101c", "class": "0207"}
H100_GPU = {"vendor": "10de", "device": "2330", "class": "0302"}


@pytest.fixture(scope="module")
def aks():
    return plan_stack("aks-h100")


@pytest.fixture(scope="module")
def eks():
    return plan_stack("aws-p5")


def pod_specs(job: dict) -> dict[str, dict]:
    return {role: spec["template"]["spec"] for role, spec in job["spec"]["mpiReplicaSpecs"].items()}


def launched_jobs(plan) -> list[dict]:
    """The MPIJob validate creates from the outputs, and the one `plan --out` writes."""
    bundle = render_k8s_bundle(plan.spec, plan.stack)
    return [
        build_mpijob(plan.run.outputs["ncclLauncher"]),
        yaml.safe_load(bundle["validation/nccl-tests-mpijob.yaml"]),
    ]


# -- NFD labels the Mellanox VFs the NicClusterPolicy selects on ------------------------


def _nfd_matches(expressions: dict, device: dict) -> bool:
    for attr, expr in expressions.items():
        op, values = expr["op"], expr.get("value", [])
        if op == "In" and device.get(attr) not in values:
            return False
        if op == "Exists" and attr not in device:
            return False
        if op not in ("In", "Exists"):
            raise AssertionError(f"test matcher lacks op {op}")
    return True


def nfd_labels(rule_doc: dict, devices: list[dict]) -> dict[str, str]:
    """The labels NFD's rule engine gives a node with these PCI devices (matchFeatures on
    pci.device: a feature matches when one device satisfies every expression)."""
    labels: dict[str, str] = {}
    for rule in rule_doc["spec"]["rules"]:
        terms = rule.get("matchFeatures", [])
        assert terms and all(t["feature"] == "pci.device" for t in terms), rule
        if all(any(_nfd_matches(t["matchExpressions"], d) for d in devices) for t in terms):
            labels.update({k: str(v) for k, v in rule.get("labels", {}).items()})
    return labels


def _selected_label(policy_spec: dict) -> tuple[str, list[str]]:
    terms = policy_spec["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    ((expr,),) = [t["matchExpressions"] for t in terms["nodeSelectorTerms"]]
    return expr["key"], expr["values"]


@pytest.mark.parametrize("hca", [ND_H100_V5_HCA, ND_A100_V4_HCA], ids=["ndv5-101e", "ndv4-101c"])
def test_node_feature_rule_labels_the_hcas_the_nic_policy_selects(aks, hca) -> None:
    (policy,) = resources(aks, NIC_POLICY)
    key, values = _selected_label(policy.inputs["spec"])
    (rule,) = resources(aks, NFR)
    doc = {"spec": rule.inputs["spec"]}
    assert nfd_labels(doc, [H100_GPU, hca]).get(key) in values
    assert key not in nfd_labels(doc, [H100_GPU]), "a node without the HCA is not selected"
    # the rule is applied by the program, not left to the chart (deployNodeFeatureRules: false)
    assert rule.parent == policy.parent


# -- ranks started over ssh get the image's PATH / LD_LIBRARY_PATH / LD_PRELOAD ---------


def launcher_argv(job: dict) -> list[str]:
    c = pod_specs(job)["Launcher"]["containers"][0]
    return [*c.get("command", []), *c.get("args", [])]


def forwarded(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "-x"]


def test_eks_mpirun_is_absolute_and_forwards_the_image_env(eks) -> None:
    for job in launched_jobs(eks):
        argv = launcher_argv(job)
        assert argv[0] == "/opt/amazon/openmpi/bin/mpirun", argv
        env = {e["name"] for e in pod_specs(job)["Launcher"]["containers"][0]["env"]}
        # exactly: the image's own variables, then every variable the launcher sets
        assert forwarded(argv) == ["PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", *sorted(env)]


def test_aks_mpirun_is_absolute_and_forwards_the_image_env(aks) -> None:
    for job in launched_jobs(aks):
        argv = launcher_argv(job)
        assert argv[0] == "/usr/bin/mpirun", argv
        assert forwarded(argv)[:2] == ["PATH", "LD_LIBRARY_PATH"]


# -- every env name once (the CRD's list-map; tests/unit/render/test_crd_schemas.py too) ----------


@pytest.mark.parametrize("stack", ["aks-h100", "aws-p5"])
def test_launcher_env_names_are_unique(stack: str, aks, eks) -> None:
    plan = aks if stack == "aks-h100" else eks
    for job in launched_jobs(plan):
        for pod in pod_specs(job).values():
            for c in pod["containers"]:
                names = [e["name"] for e in c.get("env", [])]
                assert len(names) == len(set(names)), names


# -- the topology file exists where NCCL_TOPO_FILE points; GPUDirect over any path -------


def test_aks_workers_mount_the_topology_and_nccl_uses_gdr(aks) -> None:
    cms = [
        r
        for r in resources(aks, "kubernetes:core/v1:ConfigMap")
        if r.inputs["metadata"]["name"] == "nccl-topology"
    ]
    assert len(cms) == 1, "the topology ConfigMap is applied with the cluster"
    (cm,) = cms
    for job in launched_jobs(aks):
        pods = pod_specs(job)
        env = {e["name"]: e["value"] for e in pods["Launcher"]["containers"][0]["env"]}
        topo = env["NCCL_TOPO_FILE"]
        assert env["NCCL_NET_GDR_LEVEL"] == "SYS"
        assert topo == "/opt/nvidia-topology/ndv5-topo.xml"
        worker = pods["Worker"]
        mounts = {m["mountPath"]: m["name"] for m in worker["containers"][0]["volumeMounts"]}
        assert mounts == {"/dev/shm": "dshm", "/opt/nvidia-topology": "nccl-topology"}
        (vol,) = [v for v in worker["volumes"] if v["name"] == "nccl-topology"]
        assert vol["configMap"]["name"] == "nccl-topology"
        assert Path(topo).name in cm.inputs["data"]
        assert job["metadata"]["namespace"] == cm.inputs["metadata"]["namespace"]
    xml = cm.inputs["data"]["ndv5-topo.xml"]
    # 8 GPUs (class 0x0302) and 8 HCAs (0x0207), each pair behind its own PCIe switch
    assert xml.count('class="0x030200"') == 8 and xml.count('class="0x020700"') == 8


def test_a_cluster_made_elsewhere_gets_no_vm_only_topology_path() -> None:
    job = build_mpijob(launcher_for_sku("Standard_ND96isr_H100_v5", 2))
    env = {e["name"]: e["value"] for e in pod_specs(job)["Launcher"]["containers"][0]["env"]}
    assert not env["NCCL_TOPO_FILE"].startswith("/opt/microsoft"), env["NCCL_TOPO_FILE"]


# -- Kueue admits the job: every requested resource is covered, within quota --------------

_UNITS = {"": 1, "m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "M": 1e6}


def quantity(v) -> float:
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(v))
    assert m, v
    return float(m.group(1)) * _UNITS[m.group(2)]


def kueue_objects(plan) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for text in render_k8s_bundle(plan.spec, plan.stack).values():
        for doc in yaml.safe_load_all(text):
            if doc and doc.get("apiVersion", "").startswith("kueue.x-k8s.io/"):
                found.setdefault(doc["kind"], []).append(doc)
    return found


@pytest.mark.parametrize("stack", ["aks-h100", "aws-p5"])
def test_kueue_admits_the_nccl_job(stack: str) -> None:
    plan = plan_stack(stack, "kubernetes.kueue=true")
    objs = kueue_objects(plan)
    (cq,) = objs["ClusterQueue"]
    (group,) = cq["spec"]["resourceGroups"]
    (flavor,) = group["flavors"]
    quota = {r["name"]: quantity(r["nominalQuota"]) for r in flavor["resources"]}
    assert set(quota) == set(group["coveredResources"])  # the CRD's CEL rule
    for job in launched_jobs(plan):
        labels = job["metadata"]["labels"]
        assert labels.get("kueue.x-k8s.io/queue-name") == objs["LocalQueue"][0]["metadata"]["name"]
        used: dict[str, float] = {}
        for role, spec in job["spec"]["mpiReplicaSpecs"].items():
            for c in spec["template"]["spec"]["containers"]:
                for name, value in c["resources"].get("requests", {}).items():
                    assert name in quota, f"{role} requests {name}, not covered: never admitted"
                    used[name] = used.get(name, 0) + quantity(value) * spec["replicas"]
        for name, amount in used.items():
            assert amount <= quota[name], (name, amount, quota[name])
    (rf,) = objs["ResourceFlavor"]
    taints_tolerated = {t["key"] for t in rf["spec"].get("tolerations", [])}
    assert "nvidia.com/gpu" in taints_tolerated, "pods on the flavor's nodes tolerate the GPU taint"


# -- GPU node groups in reserved capacity update without a surge node ---------------------


@pytest.mark.parametrize(
    "overrides",
    [
        ["partitions[0].capacityBlock=true", f"partitions[0].capacityReservationId={RESERVATION}"],
        [f"partitions[0].capacityReservationId={RESERVATION}"],
    ],
    ids=["block", "odcr"],
)
def test_reserved_gpu_node_group_updates_without_surge(overrides) -> None:
    plan = plan_stack("aws-p5", *overrides)
    gpu = [r for r in resources(plan, NG, at_least=2) if r.inputs["amiType"].endswith("NVIDIA")]
    assert len(gpu) == 1
    assert gpu[0].inputs["updateConfig"].get("updateStrategy") == "MINIMAL"


# -- a capacity reservation gets no new cluster placement group ---------------------------


def test_odcr_gets_no_new_placement_group() -> None:
    plan = plan_stack("aws-p5", f"partitions[0].capacityReservationId={RESERVATION}")
    assert plan.run.by_type(PG) == []
    gpu_lt = next(r for r in resources(plan, LT, at_least=2) if "instanceType" in r.inputs)
    assert "groupName" not in (gpu_lt.inputs.get("placement") or {})
    assert any("placement group" in f.message for f in plan.findings), plan.findings


# -- /dev/shm is bounded and the memory limit pays for it --------------------------------


@pytest.mark.parametrize("stack", ["aks-h100", "aws-p5"])
def test_shm_is_sized_and_inside_the_worker_memory_limit(stack: str, aks, eks) -> None:
    plan = aks if stack == "aks-h100" else eks
    for job in launched_jobs(plan):
        worker = pod_specs(job)["Worker"]
        (dshm,) = [v for v in worker["volumes"] if v["name"] == "dshm"]
        size = quantity(dshm["emptyDir"]["sizeLimit"])
        limit = quantity(worker["containers"][0]["resources"]["limits"]["memory"])
        assert size >= 2**30
        assert limit >= size + 8 * 2**30, "the worker keeps memory of its own beyond /dev/shm"


# -- the instance NVMe holds containerd's images ---------------------------------------


def test_eks_gpu_nodes_put_containerd_on_instance_nvme(eks) -> None:
    gpu_lt = next(r for r in resources(eks, LT, at_least=2) if "instanceType" in r.inputs)
    mime = email.message_from_string(base64.b64decode(gpu_lt.inputs["userData"]).decode())
    assert mime.is_multipart(), "EKS merges only MIME multi-part user data"
    docs = [
        yaml.safe_load(part.get_payload())
        for part in mime.walk()
        if part.get_content_type() == "application/node.eks.aws"
    ]
    (node_config,) = docs
    assert node_config["apiVersion"] == "node.eks.aws/v1alpha1"
    assert node_config["spec"]["instance"]["localStorage"]["strategy"] == "RAID0"


# -- the peermem loader loads the module again when it is gone -------------------------


def test_peermem_loader_reloads_the_module(tmp_path: Path) -> None:
    plan = plan_stack("aks-h100", "kubernetes.gpuDriver=managed")
    ds = next(
        r
        for r in resources(plan, "kubernetes:apps/v1:DaemonSet")
        if r.inputs["metadata"]["name"] == "nvidia-peermem-loader"
    )
    (c,) = ds.inputs["spec"]["template"]["spec"]["containers"]
    probe = c["livenessProbe"]
    assert probe["periodSeconds"] <= 60
    log = tmp_path / "calls"
    stub = tmp_path / "nsenter"
    stub.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    stub.chmod(0o755)
    argv = probe["exec"]["command"]
    proc = subprocess.run(argv, env={"PATH": f"{tmp_path}:/usr/bin:/bin"}, check=False)
    assert proc.returncode == 0, shlex.join(argv)
    assert "modprobe nvidia-peermem" in log.read_text()
