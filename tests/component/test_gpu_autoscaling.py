"""Kubernetes GPU node groups scale to zero, under Pulumi's mock engine: EKS node groups sized by
the cluster autoscaler (a Helm release with its own Pod Identity role), AKS pools by AKS's
autoscaler; each told what a node offers while there is none (spec side:
tests/unit/spec/test_gpu_scale_to_zero.py)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import plan_stack, resources

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG_TAG = "aws:autoscaling/tag:Tag"
RELEASE = "kubernetes:helm.sh/v3:Release"
POOL = "azure-native:containerservice:AgentPool"
AKS = "azure-native:containerservice:ManagedCluster"


@pytest.fixture(scope="module")
def p5():
    return plan_stack("aws-p5")


@pytest.fixture(scope="module")
def h100():
    return plan_stack("aks-h100")


def test_eks_gpu_node_group_starts_at_zero_and_may_grow_to_nodes(p5) -> None:
    """Old code: desired = min = max = nodes (2 x p5.48xlarge billed around the clock)."""
    (group,) = [g for g in resources(p5, NODE_GROUP, at_least=2) if g.name.endswith("-gpu-ng")]
    assert group.inputs["scalingConfig"] == {"desiredSize": 0, "minSize": 0, "maxSize": 2}
    assert group.ignore_changes == ["scalingConfig.desiredSize"]


def test_eks_reserved_capacity_stays_at_its_size() -> None:
    plan = plan_stack(
        "aws-p5",
        "partitions[0].capacityBlock=true",
        "partitions[0].capacityReservationId=cr-0123456789abcdef0",
    )
    (group,) = [g for g in resources(plan, NODE_GROUP, at_least=2) if g.name.endswith("-gpu-ng")]
    assert group.inputs["scalingConfig"] == {"desiredSize": 2, "minSize": 2, "maxSize": 2}


def test_eks_auto_scaling_group_describes_a_node_it_has_not_got(p5) -> None:
    tags = {t.inputs["tag"]["key"]: t for t in resources(p5, ASG_TAG, at_least=4)}
    efa = tags["k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"]
    assert efa.inputs["tag"]["value"] == "32"
    assert efa.inputs["tag"]["propagateAtLaunch"] is False
    assert efa.inputs["autoscalingGroupName"].startswith("eks-")  # the node group's own ASG
    taint = tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"]
    assert taint.inputs["tag"]["value"] == "present:NoSchedule"


def test_eks_cluster_autoscaler_release_and_its_pod_identity(p5) -> None:
    (ca,) = [
        r for r in resources(p5, RELEASE, at_least=3) if r.inputs["name"] == "cluster-autoscaler"
    ]
    (cluster,) = resources(p5, "aws:eks/cluster:Cluster")
    values = ca.inputs["values"]
    assert values["autoDiscovery"]["clusterName"] == cluster.inputs["name"]
    assert values["extraArgs"]["scale-down-unneeded-time"] == "10m"
    (assoc,) = resources(p5, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert assoc.inputs["namespace"] == ca.inputs["namespace"]
    assert assoc.inputs["serviceAccount"] == values["rbac"]["serviceAccount"]["name"]
    (policy,) = [
        p for p in resources(p5, "aws:iam/rolePolicy:RolePolicy") if "autoscaler" in p.name
    ]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    (scale,) = [s for s in statements if "autoscaling:SetDesiredCapacity" in s["Action"]]
    owned = f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster.inputs['name']}"
    assert scale["Condition"] == {"StringEquals": {owned: "owned"}}


def test_aks_gpu_pool_autoscales_from_zero(h100) -> None:
    """Old code: count = nodes, no autoscaler (2 x ND96isr H100 v5 billed around the clock)."""
    (pool,) = resources(h100, POOL)
    assert pool.inputs["enableAutoScaling"] is True
    assert (pool.inputs["minCount"], pool.inputs["maxCount"], pool.inputs["count"]) == (0, 2, 0)
    assert pool.ignore_changes == ["count"]
    tags = pool.inputs["tags"]
    assert tags["k8s.io_cluster-autoscaler_node-template_resources_rdma_ib"] == "8"
    assert tags["k8s.io_cluster-autoscaler_node-template_taint_nvidia.com_gpu"] == (
        "present:NoSchedule"
    )
    (cluster,) = resources(h100, AKS)
    assert cluster.inputs["autoScalerProfile"]["scaleDownUnneededTime"] == "10m"
    assert not [r for r in resources(h100, RELEASE) if r.inputs["name"] == "cluster-autoscaler"]
