"""Node groups and pools carry the cluster's Kubernetes version (and on EKS the newest AMI
release for it, read from its SSM parameter at `up`): a version bump moves the nodes too."""

from __future__ import annotations

from clusterctl.plan.invokes import MOCK_INVOKES
from tests.conftest import plan_stack, resources

NG = "aws:eks/nodeGroup:NodeGroup"
POOL = "azure-native:containerservice:AgentPool"
AKS = "azure-native:containerservice:ManagedCluster"


def test_eks_node_groups_follow_the_cluster_version_and_its_ami_release() -> None:
    """Old code: no version, no releaseVersion; every node booted the creation-day AMI."""
    for version in ("1.35", "1.33"):
        groups = resources(plan_stack("aws-p5", f'kubernetes.version="{version}"'), NG, at_least=2)
        for group in groups:
            assert group.inputs["version"] == version
            assert group.inputs["releaseVersion"].startswith(f"{version}.")


def test_the_release_comes_from_the_ami_types_ssm_parameter() -> None:
    asked: list[str] = []
    real = MOCK_INVOKES["aws:ssm/getParameter:getParameter"]

    def spy(args: dict) -> dict:
        asked.append(args["name"])
        return real(args)

    MOCK_INVOKES["aws:ssm/getParameter:getParameter"] = spy
    try:
        plan_stack("aws-p5", 'kubernetes.version="1.34"')
    finally:
        MOCK_INVOKES["aws:ssm/getParameter:getParameter"] = real
    base = "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64"
    assert f"{base}/nvidia/recommended/release_version" in asked
    assert f"{base}/standard/recommended/release_version" in asked


def test_aks_pools_follow_the_cluster_version() -> None:
    """Old code: no orchestratorVersion on the pools."""
    plan = plan_stack("aks-h100", 'kubernetes.version="1.34"')
    (cluster,) = resources(plan, AKS)
    assert cluster.inputs["kubernetesVersion"] == "1.34"
    assert [p["orchestratorVersion"] for p in cluster.inputs["agentPoolProfiles"]] == ["1.34"]
    for pool in resources(plan, POOL):
        assert pool.inputs["orchestratorVersion"] == "1.34"
