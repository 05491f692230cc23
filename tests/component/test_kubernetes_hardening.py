"""The EKS (aws-p5) and AKS (aks-h100) stacks hardened: the API server reachable only from the
listed ranges, sign-in through the cloud's identity, the node role out of pods' reach, upgrades on
a stated policy; under Pulumi's mock engine (the spec rules:
tests/unit/spec/test_kubernetes_hardening_rules.py)."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import plan_stack, resources

EKS = "aws:eks/cluster:Cluster"
AKS = "azure-native:containerservice:ManagedCluster"


@pytest.fixture(scope="module")
def p5():
    return plan_stack("aws-p5")


@pytest.fixture(scope="module")
def h100():
    return plan_stack("aks-h100")


def test_eks_api_endpoint_is_limited_to_the_listed_ranges(p5) -> None:
    (cluster,) = resources(p5, EKS)
    vpc = cluster.inputs["vpcConfig"]
    assert vpc["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert vpc["endpointPrivateAccess"] is True


def test_aks_api_server_is_limited_to_the_listed_ranges(h100) -> None:
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


def test_imds_hop_limit_1_on_every_node(p5) -> None:
    for template in resources(p5, LT, at_least=2):
        meta = template.inputs["metadataOptions"]
        assert (meta["httpTokens"], meta["httpPutResponseHopLimit"]) == ("required", 1)


def test_the_vpc_cni_policy_is_not_on_the_node_role(p5) -> None:
    (node_role,) = _trusted(p5, "ec2.amazonaws.com")
    assert "AmazonEKS_CNI_Policy" not in _role_policies(p5)[node_role.name]


def test_the_vpc_cni_gets_its_policy_through_pod_identity(p5) -> None:
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


ASSIGN = "azure-native:authorization:RoleAssignment"


def test_aks_signs_in_with_entra_id_and_azure_rbac(h100) -> None:
    (cluster,) = resources(h100, AKS)
    assert cluster.inputs["disableLocalAccounts"] is True
    aad = cluster.inputs["aadProfile"]
    assert aad["managed"] is True and aad["enableAzureRBAC"] is True
    assert aad["tenantID"] == "33333333-3333-3333-3333-333333333333"  # the plan's tenant


def test_the_deployer_gets_cluster_admin_on_this_cluster_only(h100) -> None:
    (assignment,) = resources(h100, ASSIGN)
    assert assignment.inputs["roleDefinitionId"].endswith(
        "/roleDefinitions/b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"  # AKS RBAC Cluster Admin
    )
    assert assignment.inputs["principalId"] == "55555555-5555-5555-5555-555555555555"
    assert assignment.inputs["principalType"] == "User"  # an az CLI login
    (cluster,) = resources(h100, AKS)
    scope = assignment.inputs["scope"]  # the cluster's id (ARM's form; named by resourceName)
    assert "/providers/Microsoft.ContainerService/managedClusters/" in scope
    assert scope.endswith(f"/{cluster.inputs['resourceName']}")
    (provider,) = resources(h100, "pulumi:providers:kubernetes")
    assert assignment.name in provider.depends_on  # the Helm releases run as the deployer


def test_the_kubeconfig_is_the_users_own_login(h100) -> None:
    kubeconfig = yaml.safe_load(h100.run.outputs["kubeconfig"])
    (user,) = kubeconfig["users"]
    exec_ = user["user"]["exec"]
    assert exec_["command"] == "kubelogin"
    assert exec_["args"][:3] == ["get-token", "--login", "azurecli"]
    assert "6dae42f8-4368-4678-94ff-3960e28e3630" in exec_["args"]
    assert not {"token", "client-key-data", "client-certificate-data"} & set(user["user"])
    (cluster,) = kubeconfig["clusters"]
    assert cluster["cluster"]["certificate-authority-data"]


def test_a_service_principal_deployer_is_assigned_as_one(monkeypatch) -> None:
    monkeypatch.setenv("ARM_CLIENT_ID", "44444444-4444-4444-4444-444444444444")
    (assignment,) = resources(plan_stack("aks-h100"), ASSIGN)
    assert assignment.inputs["principalType"] == "ServicePrincipal"


MAINT = "azure-native:containerservice:MaintenanceConfiguration"


def test_eks_135_on_standard_support_only(p5) -> None:
    (cluster,) = resources(p5, EKS)
    assert cluster.inputs["version"] == "1.35"
    assert cluster.inputs["upgradePolicy"] == {"supportType": "STANDARD"}


def test_aks_upgrades_and_reimages_only_in_a_weekly_window(h100) -> None:
    (cluster,) = resources(h100, AKS)
    assert cluster.inputs["autoUpgradeProfile"] == {
        "upgradeChannel": "patch",
        "nodeOSUpgradeChannel": "NodeImage",
    }
    configs = {m.inputs["configName"]: m.inputs for m in resources(h100, MAINT, at_least=2)}
    assert set(configs) == {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}
    for inputs in configs.values():
        window = inputs["maintenanceWindow"]
        assert window["schedule"] == {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Sunday"}}
        assert window["durationHours"] >= 4  # the shortest AKS accepts
        assert (window["startTime"], window["utcOffset"]) == ("00:00", "+00:00")


def test_no_driver_upgrade_drains_gpu_nodes_by_itself(h100) -> None:
    (policy,) = resources(h100, "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy")
    assert policy.inputs["spec"]["ofedDriver"]["upgradePolicy"] == {"autoUpgrade": False}
    assert '"force": true' not in json.dumps(policy.inputs).lower()
    (operator,) = [
        r
        for r in resources(h100, "kubernetes:helm.sh/v3:Release", at_least=2)
        if r.inputs["name"] == "gpu-operator"
    ]
    assert operator.inputs["values"]["driver"]["upgradePolicy"] == {"autoUpgrade": False}
