"""Shared GPUs on Kubernetes under Pulumi's mock engine: a pool's `sharing` becomes the AKS pool's
gpuInstanceProfile (AKS-installed driver, one profile filling the GPU), or the GPU Operator's MIG
manager with a mig-parted config the pool's nodes pick by label, or the device plugin's
time-slicing config."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import plan_stack, resources

# The labels NVIDIA's MIG manager and device plugin read (GPU Operator docs)
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"

POOL = "azure-native:containerservice:AgentPool"
NG = "aws:eks/nodeGroup:NodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
MIG7 = "partitions[0].sharing={mig: {1g.10gb: 7}}"
MIXED = "partitions[0].sharing={mig: {3g.40gb: 1, 2g.20gb: 2}}"


def _gpu_groups(plan, type_: str) -> list:
    key = "labels" if type_ == NG else "nodeLabels"
    return [r for r in resources(plan, type_) if "gpu-clusters/partition" in (r.inputs[key] or {})]


def _operator_values(plan) -> dict:
    found = {r.inputs["name"]: r.inputs for r in resources(plan, RELEASE)}
    return found["gpu-operator"]["values"]


def test_aks_pool_with_its_driver_is_cut_by_gpu_instance_profile() -> None:
    plan = plan_stack("aks-h100", "kubernetes.gpuDriver=managed", MIG7)
    (pool,) = resources(plan, POOL)
    assert pool.inputs["gpuInstanceProfile"] == "MIG1g"
    assert pool.inputs["gpuProfile"] == {"driver": "Install"}
    plugin = {r.inputs["name"]: r.inputs for r in resources(plan, RELEASE)}["nvidia-device-plugin"]
    assert plugin["values"]["migStrategy"] == "mixed"


def test_aks_pool_under_the_gpu_operator_gets_the_mig_manager_not_a_profile() -> None:
    """AKS applies gpuInstanceProfile only where it installs the driver (AgentBaker cse_main.sh):
    with gpuDriver None the operator's MIG manager makes the layout."""
    plan = plan_stack("aks-h100", MIXED)
    (pool,) = resources(plan, POOL)
    assert "gpuInstanceProfile" not in pool.inputs or pool.inputs["gpuInstanceProfile"] is None
    assert pool.inputs["nodeLabels"][MIG_CONFIG_LABEL] == "gpucl-gpu"
    values = _operator_values(plan)
    assert values["mig"] == {"strategy": "mixed"}
    manager = values["migManager"]
    assert manager["enabled"] is True and manager["config"]["default"] == "all-disabled"
    parted = yaml.safe_load(manager["config"]["data"]["config.yaml"])
    assert parted["mig-configs"]["gpucl-gpu"] == [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 1, "2g.20gb": 2}}
    ]


@pytest.mark.parametrize("stack", ["aws-p5", "aks-h100"])
def test_shards_are_time_slicing_replicas_the_pool_picks_by_label(stack: str) -> None:
    plan = plan_stack(stack, "partitions[0].sharing={shards: 4}")
    (group,) = _gpu_groups(plan, NG if stack == "aws-p5" else POOL)
    labels = group.inputs["labels" if stack == "aws-p5" else "nodeLabels"]
    assert labels[DEVICE_PLUGIN_CONFIG_LABEL] == "gpucl-gpu"
    assert MIG_CONFIG_LABEL not in labels
    config = _operator_values(plan)["devicePlugin"]["config"]
    assert config["name"] == "gpucl-device-plugin" and config["create"] is True
    sliced = yaml.safe_load(config["data"]["gpucl-gpu"])
    assert sliced["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": 4}
    ]
    assert "sharing" not in yaml.safe_load(config["data"][config["default"]])


def test_eks_node_group_names_its_mig_layout_and_whole_gpu_pools_name_none() -> None:
    plan = plan_stack("aws-p5", MIG7)
    (group,) = _gpu_groups(plan, NG)
    assert group.inputs["labels"][MIG_CONFIG_LABEL] == "gpucl-gpu"
    assert _operator_values(plan)["migManager"]["enabled"] is True
    whole = plan_stack("aws-p5")
    (group,) = _gpu_groups(whole, NG)
    assert MIG_CONFIG_LABEL not in group.inputs["labels"]
    values = _operator_values(whole)
    assert values["migManager"] == {"enabled": False} and "devicePlugin" not in values
