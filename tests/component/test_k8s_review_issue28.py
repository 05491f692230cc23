"""Issue 28: the review findings on the EKS (aws-p5) and AKS (aks-h100) stacks, under Pulumi's
mock engine (the spec rules: tests/unit/test_k8s_review_issue28.py)."""

from __future__ import annotations

import json

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


ROLE = "aws:iam/role:Role"
ATTACH = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
ADDON = "aws:eks/addon:Addon"
LT = "aws:ec2/launchTemplate:LaunchTemplate"


def _role_policies(plan) -> dict[str, list[str]]:
    """Role resource name -> the managed policies attached to it (an attachment is named
    `<role>-<policy>`: the role's name is unknown before `up`)."""
    out: dict[str, list[str]] = {r.name: [] for r in resources(plan, ROLE, at_least=2)}
    for att in resources(plan, ATTACH):
        policy = att.inputs["policyArn"].rsplit("/", 1)[-1]
        (role,) = [n for n in out if att.name == f"{n}-{policy}"]
        out[role].append(policy)
    return out


def _trusted(plan, service: str) -> list:
    return [
        r
        for r in resources(plan, ROLE, at_least=2)
        if json.loads(r.inputs["assumeRolePolicy"])["Statement"][0]["Principal"]["Service"]
        == service
    ]


def test_finding3_imds_hop_limit_1_on_every_node(p5) -> None:
    for template in resources(p5, LT, at_least=2):
        meta = template.inputs["metadataOptions"]
        assert (meta["httpTokens"], meta["httpPutResponseHopLimit"]) == ("required", 1)


def test_finding3_the_vpc_cni_policy_is_not_on_the_node_role(p5) -> None:
    (node_role,) = _trusted(p5, "ec2.amazonaws.com")
    assert "AmazonEKS_CNI_Policy" not in _role_policies(p5)[node_role.name]


def test_finding3_the_vpc_cni_gets_its_policy_through_pod_identity(p5) -> None:
    addons = {a.inputs["addonName"]: a for a in resources(p5, ADDON, at_least=2)}
    assert "eks-pod-identity-agent" in addons
    (assoc,) = addons["vpc-cni"].inputs["podIdentityAssociations"]
    assert assoc["serviceAccount"] == "aws-node"
    # the mock engine's ARN of a role ends with its resource name
    (cni_role,) = [
        r for r in _trusted(p5, "pods.eks.amazonaws.com") if assoc["roleArn"].endswith(f":{r.name}")
    ]
    statement = json.loads(cni_role.inputs["assumeRolePolicy"])["Statement"][0]
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert _role_policies(p5)[cni_role.name] == ["AmazonEKS_CNI_Policy"]
