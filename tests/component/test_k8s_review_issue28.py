"""Issue 28: the review findings on the EKS (aws-p5) and AKS (aks-h100) stacks, under Pulumi's
mock engine (the spec rules: tests/unit/test_k8s_review_issue28.py)."""

from __future__ import annotations

import pytest

from tests.conftest import plan_stack, resources

EKS = "aws:eks/cluster:Cluster"
AKS = "azure-native:containerservice:ManagedCluster"


@pytest.fixture(scope="module")
def p5():
    return plan_stack("aws-p5")


@pytest.fixture(scope="module")
def h100():
    return plan_stack("aks-h100")


def test_finding1_eks_api_endpoint_is_limited_to_the_listed_ranges(p5) -> None:
    (cluster,) = resources(p5, EKS)
    vpc = cluster.inputs["vpcConfig"]
    assert vpc["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert vpc["endpointPrivateAccess"] is True


def test_finding1_aks_api_server_is_limited_to_the_listed_ranges(h100) -> None:
    (cluster,) = resources(h100, AKS)
    access = cluster.inputs["apiServerAccessProfile"]
    assert access["authorizedIPRanges"] == ["203.0.113.0/24"]
