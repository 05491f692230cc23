"""Shared GPUs on Kubernetes node pools: the same `sharing` and refusals as on Slurm, what the
pinned GPU Operator chart renders from it (the ClusterPolicy naming the MIG manager's mig-parted
ConfigMap and the device plugin's time-slicing ConfigMap, both made by the chart), and plan's
per-slice prices."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from clusterctl.errors import SpecError
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import shared_gpu_offers
from clusterctl.spec.kubernetes import aks_gpu_instance_profile
from clusterctl.spec.load import load_stack_spec
from tests.unit.render.test_helm_rendered_crds import rendered

FIELD = "gpu-clusters:cluster.partitions[0].sharing"
MIXED = "partitions[0].sharing={mig: {3g.40gb: 1, 2g.20gb: 2}}"
SHARDS = "partitions[0].sharing={shards: 4}"
MANAGED = "kubernetes.gpuDriver=managed"

# The keys the consumers of these files read, from their Go types: NVIDIA/mig-parted
# api/spec/v1/spec.go (Spec, MigConfigSpec) and NVIDIA/k8s-device-plugin api/config/v1
# (Config, Flags, Sharing, ReplicatedResources, ReplicatedResource).
MIG_PARTED_SPEC = {"version", "mig-configs"}
MIG_CONFIG_SPEC = {"device-filter", "devices", "mig-enabled", "mig-devices"}
DEVICE_PLUGIN_CONFIG = {"version", "flags", "resources", "sharing", "imex"}
REPLICATED_RESOURCES = {"renameByDefault", "failRequestsGreaterThanOne", "resources"}
REPLICATED_RESOURCE = {"name", "rename", "devices", "replicas"}


@pytest.mark.parametrize("stack", ["aws-p5", "aks-h100"])
@pytest.mark.parametrize(
    ("override", "field", "words"),
    [
        ("{mig: {4g.40gb: 2}}", f"{FIELD}.mig", "8 compute slices of 7"),
        ("{mig: {2g.10gb: 3}}", f"{FIELD}.mig", "not a MIG profile of H100-SXM5-80GB"),
        ("{mig: {1g.10gb: 7}, shards: 4}", FIELD, "not both"),
    ],
)
def test_a_pool_gets_the_slurm_partitions_refusals(stack, override, field, words) -> None:
    with pytest.raises(SpecError) as caught:
        load_stack_spec(stack, [f"partitions[0].sharing={override}"])
    lines = caught.value.problems
    assert len(lines) == 1 and lines[0].startswith(field + ":") and words in lines[0], lines


@pytest.mark.parametrize(
    ("stack", "override"),
    [
        ("aws-p5", "partitions[0].sharing={mig: {1g.10gb: 7}}"),
        ("aws-p5", SHARDS),
        ("aks-h100", SHARDS),
        ("aks-h100", MIXED),  # two profiles: gpuInstanceProfile cannot say it
        ("aks-h100", "partitions[0].sharing={mig: {1g.10gb: 3}}"),  # AKS would cut 7
    ],
)
def test_without_the_gpu_operator_only_an_aks_profile_pool_shares(stack, override) -> None:
    with pytest.raises(SpecError) as caught:
        load_stack_spec(stack, [MANAGED, override])
    (line,) = caught.value.problems
    assert line.startswith(FIELD + ":") and "kubernetes.gpuDriver: gpu-operator" in line


@pytest.mark.parametrize("stack", ["aws-p5", "aks-h100", "azure-h100"])
def test_the_post_deploy_nccl_run_is_refused_on_a_mig_default_pool(stack: str) -> None:
    mig = "partitions[0].sharing={mig: {1g.10gb: 7}}"
    load_stack_spec(stack, [mig])  # accepted without onDeploy
    with pytest.raises(SpecError) as caught:
        load_stack_spec(stack, [mig, "validation.nccl.onDeploy=true"])
    (line,) = caught.value.problems
    assert line.startswith("gpu-clusters:cluster.validation.nccl.onDeploy:"), line
    assert "MIG slices" in line


@pytest.mark.parametrize(
    ("layout", "profile"),
    [
        ("{1g.10gb: 7}", "MIG1g"),
        ("{2g.20gb: 3}", "MIG2g"),
        ("{3g.40gb: 2}", "MIG3g"),
        ("{4g.40gb: 1}", "MIG4g"),
        ("{7g.80gb: 1}", "MIG7g"),
        ("{1g.20gb: 4}", None),  # not the smallest 1g profile: AKS's MIG1g is 1g.10gb
        ("{3g.40gb: 1}", None),  # two fit
    ],
)
def test_aks_gpu_instance_profile_only_where_it_says_the_whole_layout(layout, profile) -> None:
    spec, _ = load_stack_spec("aks-h100", [f"partitions[0].sharing={{mig: {layout}}}"])
    assert aks_gpu_instance_profile(spec.partitions[0], catalog()) == profile


def _configmap(docs: list[dict], name: str) -> dict:
    (found,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == name]
    return found


def test_the_chart_renders_the_mig_parted_config_the_cluster_policy_names() -> None:
    _, releases = rendered("aws-p5", (MIXED,))
    docs = releases["gpu-operator"]
    (policy,) = [d for d in docs if d["kind"] == "ClusterPolicy"]
    assert policy["spec"]["mig"] == {"strategy": "mixed"}
    manager = policy["spec"]["migManager"]
    assert manager["enabled"] is True
    assert manager["config"] == {"name": "gpucl-mig-parted", "default": "all-disabled"}
    parted = yaml.safe_load(_configmap(docs, "gpucl-mig-parted")["data"]["config.yaml"])
    assert set(parted) <= MIG_PARTED_SPEC and parted["version"] == "v1"
    for entries in parted["mig-configs"].values():
        assert all(set(e) <= MIG_CONFIG_SPEC for e in entries)
    (layout,) = parted["mig-configs"]["gpucl-gpu"]
    gpu = catalog().mig(catalog().require("p5.48xlarge"))
    assert gpu is not None and all(gpu.profile(p) for p in layout["mig-devices"])
    assert layout["mig-devices"] == {"3g.40gb": 1, "2g.20gb": 2}


def test_the_chart_renders_the_time_slicing_config_the_cluster_policy_names() -> None:
    _, releases = rendered("aks-h100", (SHARDS,))
    docs = releases["gpu-operator"]
    (policy,) = [d for d in docs if d["kind"] == "ClusterPolicy"]
    assert policy["spec"]["devicePlugin"]["config"] == {
        "name": "gpucl-device-plugin",
        "default": "default",
    }
    data = _configmap(docs, "gpucl-device-plugin")["data"]
    assert set(data) == {"default", "gpucl-gpu"}
    for text in data.values():
        config = yaml.safe_load(text)
        assert set(config) <= DEVICE_PLUGIN_CONFIG and config["version"] == "v1"
    sliced = yaml.safe_load(data["gpucl-gpu"])["sharing"]["timeSlicing"]
    assert set(sliced) <= REPLICATED_RESOURCES
    (resource,) = sliced["resources"]
    assert set(resource) <= REPLICATED_RESOURCE
    assert resource == {"name": "nvidia.com/gpu", "replicas": 4}


def test_plan_prices_a_pools_slices_and_names_the_resource_a_pod_requests() -> None:
    cat = catalog()
    spec, _ = load_stack_spec("aws-p5", [MIXED])
    price = cat.require("p5.48xlarge").price.usd_per_hour
    offers = {o.gres: o for o in shared_gpu_offers(spec, cat)}
    assert offers["gpu:3g.40gb"].request == "nvidia.com/mig-3g.40gb: 1"
    assert offers["gpu:3g.40gb"].usd_per_hour_each == pytest.approx(price / 8 * 3 / 7)
    spec, _ = load_stack_spec("aks-h100", [SHARDS])
    (shard,) = shared_gpu_offers(spec, cat)
    assert shard.request == "nvidia.com/gpu: 1 (time-sliced, 4 per GPU)"
    result = subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "aws-p5", "--set", MIXED],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if "x gpu:3g.40gb" in x)
    assert "node pool gpu:" in line and "nvidia.com/mig-3g.40gb" in line
    assert "per slice-hour" in line


def test_the_device_plugin_chart_advertises_aks_made_slices_by_profile() -> None:
    """AKS cut the GPUs (gpuInstanceProfile); the chart's plugin runs with MIG_STRATEGY mixed, so
    a slice is nvidia.com/mig-1g.10gb, never nvidia.com/gpu."""
    _, releases = rendered("aks-h100", (MANAGED, "partitions[0].sharing={mig: {1g.10gb: 7}}"))
    containers = [
        c
        for d in releases["nvidia-device-plugin"]
        if d["kind"] == "DaemonSet"
        for c in d["spec"]["template"]["spec"]["containers"]
        if c["name"] == "nvidia-device-plugin-ctr"
    ]
    assert containers, "the chart rendered no device plugin container"
    for c in containers:
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        assert env["MIG_STRATEGY"] == "mixed"


def _queue_quota(*overrides: str) -> dict[str, str]:
    from tests.unit.render.test_crd_schemas import custom_docs

    docs = custom_docs("aws-p5", ["kubernetes.kueue=true", *overrides])
    (queue,) = [d for _, d in docs if d["kind"] == "ClusterQueue"]
    (group,) = queue["spec"]["resourceGroups"]
    (flavor,) = group["flavors"]
    quota = {r["name"]: str(r["nominalQuota"]) for r in flavor["resources"]}
    assert sorted(quota) == sorted(group["coveredResources"])
    return quota


def test_kueue_admits_slice_requests_on_a_mig_pool() -> None:
    """Under the mixed strategy a MIG node advertises no nvidia.com/gpu, only one resource per
    profile: a queue covering whole GPUs only admitted no slice request (before)."""
    spec, _ = load_stack_spec("aws-p5", [MIXED])
    nodes, gpus = spec.partitions[0].nodes, catalog().require("p5.48xlarge").gpus
    quota = _queue_quota(MIXED)
    assert quota["nvidia.com/mig-3g.40gb"] == str(1 * gpus * nodes)
    assert quota["nvidia.com/mig-2g.20gb"] == str(2 * gpus * nodes)
    assert quota["nvidia.com/gpu"] == "0"


def test_kueue_counts_a_time_sliced_pools_replicas() -> None:
    spec, _ = load_stack_spec("aws-p5", [SHARDS])
    nodes, gpus = spec.partitions[0].nodes, catalog().require("p5.48xlarge").gpus
    assert _queue_quota(SHARDS)["nvidia.com/gpu"] == str(4 * gpus * nodes)
    assert _queue_quota()["nvidia.com/gpu"] == str(gpus * nodes)  # whole GPUs as before


def test_the_mig_manager_may_reboot_a_cloud_node_to_enable_mig() -> None:
    """Cloud VMs pass the GPUs through: turning MIG mode on may need a reset only a reboot
    gives (NVIDIA, GPU Operator with MIG: WITH_REBOOT=true in a CSP environment)."""
    _, releases = rendered("aws-p5", (MIXED,))
    (policy,) = [d for d in releases["gpu-operator"] if d["kind"] == "ClusterPolicy"]
    assert {"name": "WITH_REBOOT", "value": "true"} in policy["spec"]["migManager"]["env"]
