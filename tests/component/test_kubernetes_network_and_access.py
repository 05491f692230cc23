"""Network policy enforcement, the AKS tier, a private API server and AKS's authorization choice,
as the EKS (aws-p5) and AKS (aks-h100) programs build them under Pulumi's mock engine
(docs/decisions/0008-kubernetes-network-and-access.md; the spec rules:
tests/unit/spec/test_kubernetes_network_access_rules.py)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import plan_stack, resources

EKS = "aws:eks/cluster:Cluster"
ADDON = "aws:eks/addon:Addon"
SG_IN = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
AKS = "azure-native:containerservice:ManagedCluster"
ROLE = "azure-native:authorization:RoleAssignment"
GROUP = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
VPN = "10.8.0.0/16"


@pytest.fixture(scope="module")
def p5():
    return plan_stack("aws-p5")


@pytest.fixture(scope="module")
def h100():
    return plan_stack("aks-h100")


def _aks(*overrides: str):
    (cluster,) = resources(plan_stack("aks-h100", *overrides), AKS)
    return cluster.inputs


def test_eks_vpc_cni_enforces_network_policy(p5) -> None:
    """Old code: the VPC CNI add-on had no configuration: policies accepted, none enforced."""
    addons = {a.inputs["addonName"]: a.inputs for a in resources(p5, ADDON, at_least=2)}
    assert json.loads(addons["vpc-cni"]["configurationValues"]) == {"enableNetworkPolicy": "true"}
    others = [k for k, v in addons.items() if k != "vpc-cni" and v.get("configurationValues")]
    assert others == []


def test_aks_enforces_network_policy_with_cilium(h100) -> None:
    (cluster,) = resources(h100, AKS)
    net = cluster.inputs["networkProfile"]
    assert (net["networkDataplane"], net["networkPolicy"]) == ("cilium", "cilium")
    assert (net["networkPlugin"], net["networkPluginMode"]) == ("azure", "overlay")


def test_aks_is_on_the_standard_tier_unless_the_stack_says_free(h100) -> None:
    (cluster,) = resources(h100, AKS)
    assert cluster.inputs["sku"] == {"name": "Base", "tier": "Standard"}
    assert _aks("kubernetes.aksTier=free")["sku"] == {"name": "Base", "tier": "Free"}


def test_public_api_servers_stay_limited_to_the_listed_ranges(p5, h100) -> None:
    (eks,) = resources(p5, EKS)
    assert eks.inputs["vpcConfig"]["endpointPublicAccess"] is True
    assert eks.inputs["vpcConfig"]["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert [r for r in resources(p5, SG_IN, at_least=0) if r.inputs.get("fromPort") == 443] == []
    (aks,) = resources(h100, AKS)
    assert "enablePrivateCluster" not in aks.inputs["apiServerAccessProfile"]


def test_a_private_eks_endpoint_has_no_public_side_and_lets_in_only_the_listed_ranges() -> None:
    plan = plan_stack("aws-p5", "kubernetes.privateApiServer=true", f"ssh.allowedCidrs=[{VPN}]")
    (cluster,) = resources(plan, EKS)
    vpc = cluster.inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is False and vpc["endpointPrivateAccess"] is True
    assert "publicAccessCidrs" not in vpc
    api = [r.inputs for r in resources(plan, SG_IN) if r.inputs.get("fromPort") == 443]
    assert [(r["cidrIpv4"], r["toPort"], r["ipProtocol"]) for r in api] == [(VPN, 443, "tcp")]


def test_a_private_aks_cluster_has_no_authorized_ranges_and_a_public_name() -> None:
    access = _aks("kubernetes.privateApiServer=true", f"ssh.allowedCidrs=[{VPN}]")[
        "apiServerAccessProfile"
    ]
    assert access["enablePrivateCluster"] is True
    assert access["enablePrivateClusterPublicFQDN"] is True
    # AKS applies authorized ranges only to a public endpoint
    assert "authorizedIPRanges" not in access


def test_aks_azure_rbac_is_the_default_with_the_deployers_role(h100) -> None:
    (cluster,) = resources(h100, AKS)
    aad = cluster.inputs["aadProfile"]
    assert aad["enableAzureRBAC"] is True and "adminGroupObjectIDs" not in aad
    assert cluster.inputs["disableLocalAccounts"] is True
    assert len(resources(h100, ROLE)) == 1


def test_aks_kubernetes_rbac_binds_the_groups_and_makes_no_azure_role() -> None:
    plan = plan_stack(
        "aks-h100", "kubernetes.authorization=kubernetes-rbac",
        f"kubernetes.adminGroupObjectIds=[{GROUP}]",
    )  # fmt: skip
    (cluster,) = resources(plan, AKS)
    aad = cluster.inputs["aadProfile"]
    assert aad["enableAzureRBAC"] is False and aad["managed"] is True
    assert aad["adminGroupObjectIDs"] == [GROUP]
    assert cluster.inputs["disableLocalAccounts"] is True
    assert resources(plan, ROLE, at_least=0) == []


def test_a_private_aks_clusters_kubeconfig_names_the_public_fqdn(monkeypatch) -> None:
    """Without `server-fqdn=public` AKS hands out the privatelink name, which only a VNet linked
    to its private DNS zone resolves: `up`'s Kubernetes provider, kubectl and `validate` would
    fail on DNS from the VPN or peering the private endpoint relies on."""
    from clusterctl.plan import invokes

    real = invokes.MOCK_INVOKES["azure-native:containerservice:listManagedClusterUserCredentials"]
    seen: list[dict] = []

    def credentials(args):
        seen.append(dict(args))
        return real(args)

    monkeypatch.setitem(
        invokes.MOCK_INVOKES,
        "azure-native:containerservice:listManagedClusterUserCredentials",
        credentials,
    )
    _aks("kubernetes.privateApiServer=true", f"ssh.allowedCidrs=[{VPN}]")
    assert seen and all(a.get("serverFqdn") == "public" for a in seen), seen
    seen.clear()
    _aks()
    assert seen and all("serverFqdn" not in a for a in seen), seen
