"""The AKS + InfiniBand cluster (stack aks-h100) under Pulumi's mock engine (FACTS.md section 6)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from clusterctl.render.kubernetes import render_k8s_bundle
from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import IB_RESOURCE
from clusterctl.spec.kubernetes_addons import chart_pins
from clusterctl.spec.tags import STACK_LABEL, STACK_TAG
from tests.conftest import plan_stack, resources

POOL = "azure-native:containerservice:AgentPool"
AKS = "azure-native:containerservice:ManagedCluster"
RELEASE = "kubernetes:helm.sh/v3:Release"
NIC_POLICY = "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"
EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+$")
AKS_REST = Path(__file__).resolve().parents[1] / "data" / "azure-rest"
AGENT_POOL_DISKS = AKS_REST / "aks-agentpool-disks.2025-09-01.json"  # SOURCES.aks.md there


@pytest.fixture(scope="module")
def h100():
    return plan_stack("aks-h100")


@pytest.fixture(scope="module")
def managed():
    return plan_stack("aks-h100", "kubernetes.gpuDriver=managed")


def releases(plan) -> dict[str, dict]:
    return {r.inputs["name"]: r.inputs for r in resources(plan, RELEASE, at_least=2)}


def test_gpu_node_pool_sku_and_count(h100) -> None:
    (pool,) = resources(h100, POOL)
    assert pool.inputs["vmSize"] == "Standard_ND96isr_H100_v5"
    assert (pool.inputs["minCount"], pool.inputs["maxCount"]) == (0, 2)
    assert pool.inputs["mode"] == "User"
    assert pool.inputs["enableNodePublicIP"] is False
    assert pool.inputs["nodeTaints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert pool.inputs["nodeLabels"]["gpu-clusters/partition"] == "gpu"


def _disk_enum(prop: str) -> list[str]:
    """The values Azure's REST spec (the api-version pulumi-azure-native sends) allows `prop`."""
    spec = json.loads(AGENT_POOL_DISKS.read_text())["definitions"]
    ref = spec["ManagedClusterAgentPoolProfileProperties"]["properties"][prop]["$ref"]
    return spec[ref.rsplit("/", 1)[-1]]["enum"]


@pytest.mark.parametrize("sku", ["Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4"])
def test_gpu_pool_keeps_images_and_empty_dir_on_a_proven_local_disk(sku) -> None:
    """Containerd's root and emptyDir live on the OS disk; where the catalog proves the VM's
    temp disk, an explicit ephemeral OS disk keeps it there or fails the pool's creation, instead
    of AKS falling back to a network-attached managed disk without a word. kubeletDiskType stays
    unset: Temporary would target the same temp disk."""
    assert catalog().require(sku).resource_disk_gi_b
    (pool,) = resources(plan_stack("aks-h100", f"partitions[0].sku={sku}"), POOL)
    assert pool.inputs["vmSize"] == sku
    assert pool.inputs.get("osDiskType") == "Ephemeral"
    assert "osDiskSizeGB" not in pool.inputs, "unset: AKS sizes it to the whole temp disk"
    assert "kubeletDiskType" not in pool.inputs
    assert pool.inputs["osDiskType"] in _disk_enum("osDiskType")
    assert {"OS", "Temporary"} == set(_disk_enum("kubeletDiskType"))


@pytest.mark.parametrize("sku", [None, "Standard_ND96isr_H200_v5"])
def test_gpu_pool_leaves_the_os_disk_to_aks_where_the_catalog_has_no_proven_disk(h100, sku):
    """Old code forced Ephemeral on ND H100 v5, whose temp disk the catalog calls unverified:
    a pool that may fail at creation on a guess. AKS's own choice (ephemeral where it fits)."""
    plan = h100 if sku is None else plan_stack("aks-h100", f"partitions[0].sku={sku}")
    (pool,) = resources(plan, POOL)
    assert catalog().require(pool.inputs["vmSize"]).resource_disk_gi_b is None
    assert "osDiskType" not in pool.inputs
    assert "kubeletDiskType" not in pool.inputs


def test_gpu_operator_means_the_pool_skips_the_aks_driver(h100) -> None:
    (pool,) = resources(h100, POOL)
    assert pool.inputs["gpuProfile"] == {"driver": "None"}
    found = releases(h100)
    assert "gpu-operator" in found and "nvidia-device-plugin" not in found
    values = found["gpu-operator"]["values"]
    assert values["driver"] == {
        "enabled": True,
        "rdma": {"enabled": True},
        "upgradePolicy": {"autoUpgrade": False},  # drivers change in the maintenance window
    }
    assert values["nfd"] == {"enabled": False}, "the Network Operator runs NFD"


def test_managed_driver_means_aks_installs_it_and_no_gpu_operator(managed) -> None:
    (pool,) = resources(managed, POOL)
    assert pool.inputs["gpuProfile"] == {"driver": "Install"}
    found = releases(managed)
    assert "gpu-operator" not in found
    assert {"nvidia-device-plugin", "dcgm-exporter", "network-operator"} <= set(found)
    files = render_k8s_bundle(managed.spec, managed.stack)
    assert "manifests/nvidia-peermem-loader.yaml" in files, "GPUDirect RDMA needs nvidia-peermem"


def test_infiniband_feature_is_checked_not_registered_in_the_same_up(h100) -> None:
    """The registration is asynchronous: the program checks it (a preflight,
    tests/component/test_k8s_access_preflight.py) instead of racing the node pool against it."""
    assert h100.run.by_type("azure-native:features:SubscriptionFeatureRegistration") == []
    resources(h100, "gpu-clusters:azure:AksInfinibandFeature")


def test_network_operator_offers_rdma_ib_and_the_mpijob_asks_for_it(h100) -> None:
    (policy,) = resources(h100, NIC_POLICY)
    config = json.loads(policy.inputs["spec"]["sriovDevicePlugin"]["config"])
    (entry,) = config["resourceList"]
    assert f"{entry['resourcePrefix']}/{entry['resourceName']}" == IB_RESOURCE == "rdma/ib"
    assert entry["selectors"]["linkTypes"] == ["infiniband"]
    assert policy.inputs["spec"]["ofedDriver"]["image"] == "doca-driver"
    launcher = h100.run.outputs["ncclLauncher"]
    assert launcher["resources"] == {"nvidia.com/gpu": 8, "rdma/ib": 8, "memory": "48384Mi"}
    assert "IPC_LOCK" in launcher["capabilities"]
    job = yaml.safe_load(
        render_k8s_bundle(h100.spec, h100.stack)["validation/nccl-tests-mpijob.yaml"]
    )
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert worker["resources"]["limits"]["rdma/ib"] == 8
    assert job["spec"]["slotsPerWorker"] == 8


def test_addon_charts_are_pinned_to_exact_versions(h100) -> None:
    found = releases(h100)
    assert set(found) == {"network-operator", "gpu-operator", "prometheus"}
    pins = chart_pins(catalog())
    for name, inputs in found.items():
        assert inputs["version"] == pins[name].version
        assert EXACT_VERSION.match(inputs["version"]), inputs["version"]
    # the versions config/versions.yaml pins today: a bump shows up here as a reviewed change
    assert found["network-operator"]["version"] == "26.4.1"
    assert found["gpu-operator"]["version"] == "v26.7.0"
    assert found["prometheus"]["version"] == "29.27.0"


def test_everything_tagged_and_labelled(h100) -> None:
    for type_ in ("azure-native:resources:ResourceGroup", AKS, POOL):
        (res,) = resources(h100, type_)
        assert res.inputs["tags"][STACK_TAG] == "aks-h100", type_
    (aks,) = resources(h100, AKS)
    (system,) = aks.inputs["agentPoolProfiles"]
    assert system["tags"][STACK_TAG] == "aks-h100"
    assert system["mode"] == "System"
    for ns in resources(h100, "kubernetes:core/v1:Namespace", at_least=3):
        assert ns.inputs["metadata"]["labels"][STACK_LABEL] == "aks-h100"
    (policy,) = resources(h100, NIC_POLICY)
    assert policy.inputs["metadata"]["labels"][STACK_LABEL] == "aks-h100"


def test_kubeconfig_is_a_secret_output(h100) -> None:
    assert "kubeconfig" in h100.run.secret_outputs
    assert yaml.safe_load(h100.run.outputs["kubeconfig"])["kind"] == "Config"
    assert h100.run.outputs["gpuNodePools"]["gpu"]["gpuDriver"] == "None"
