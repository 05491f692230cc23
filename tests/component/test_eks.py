"""The EKS + EFA cluster (stack aws-p5) under Pulumi's mock engine, against FACTS.md section 5."""

from __future__ import annotations

import json
import re

import pytest

from clusterctl.clouds.aws import session_context as _aws_session_context
from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import MPI_ROOT_ENV
from clusterctl.spec.kubernetes_addons import FALLBACK_CHARTS, chart_pins
from clusterctl.spec.tags import STACK_LABEL, STACK_TAG
from components.aws.iam import POD_ROLES
from tests.conftest import plan_stack, resources

POD_POLICIES = [p for _, _, policies in POD_ROLES.values() for p in policies]

LT = "aws:ec2/launchTemplate:LaunchTemplate"
PG = "aws:ec2/placementGroup:PlacementGroup"
NG = "aws:eks/nodeGroup:NodeGroup"
SG = "aws:ec2/securityGroup:SecurityGroup"
SUBNET = "aws:ec2/subnet:Subnet"
RELEASE = "kubernetes:helm.sh/v3:Release"
# Types the AWS API gives no tags (the rest must carry the stack tag).
UNTAGGABLE = {
    "aws:ec2/routeTableAssociation:RouteTableAssociation",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
    "aws:iam/rolePolicy:RolePolicy",  # an inline policy: part of its (tagged) role
    "aws:autoscaling/tag:Tag",  # a tag itself, on the node group's Auto Scaling group
}
EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+$")


@pytest.fixture(scope="module")
def p5():
    return plan_stack("aws-p5")


@pytest.fixture(scope="module")
def p4d():
    return plan_stack("aws-p5", "partitions[0].sku=p4d.24xlarge")


@pytest.fixture(scope="module")
def block():
    return plan_stack(
        "aws-p5",
        "partitions[0].capacityBlock=true",
        "partitions[0].capacityReservationId=cr-0abc1234def567890",
    )


def gpu_template(plan):
    return next(r for r in resources(plan, LT, at_least=2) if "instanceType" in r.inputs)


def test_p5_has_32_efa_interfaces_in_the_documented_layout(p5) -> None:
    nics = gpu_template(p5).inputs["networkInterfaces"]
    layout = [(n["networkCardIndex"], n["deviceIndex"], n["interfaceType"]) for n in nics]
    assert layout[0] == (0, 0, "interface")
    assert layout[1] == (0, 1, "efa-only")
    assert layout[2:] == [(card, 0, "efa-only") for card in range(1, 32)]
    assert sum(1 for *_, kind in layout if kind == "efa-only") == 32
    assert {n["associatePublicIpAddress"] for n in nics} == {"false"}


def test_p4d_has_4_efa_interfaces(p4d) -> None:
    template = gpu_template(p4d)
    assert template.inputs["instanceType"] == "p4d.24xlarge"
    kinds = [n["interfaceType"] for n in template.inputs["networkInterfaces"]]
    assert kinds == ["interface", "efa-only", "efa-only", "efa-only", "efa-only"]


def test_imdsv2_required_and_out_of_pods_reach(p5) -> None:
    for template in resources(p5, LT, at_least=2):
        meta = template.inputs["metadataOptions"]
        assert meta["httpTokens"] == "required"
        # 1: ordinary pods (one hop behind the CNI) cannot read the node role
        assert meta["httpPutResponseHopLimit"] == 1
        assert meta["httpEndpoint"] == "enabled"


def test_cluster_placement_group_holds_the_gpu_nodes(p5) -> None:
    (pg,) = resources(p5, PG)
    assert pg.inputs["strategy"] == "cluster"
    assert gpu_template(p5).inputs["placement"]["groupName"] == pg.inputs["name"]
    assert "instanceMarketOptions" not in gpu_template(p5).inputs


def test_capacity_block_has_no_placement_group(block) -> None:
    assert block.run.by_type(PG) == []
    inputs = gpu_template(block).inputs
    assert inputs["instanceMarketOptions"]["marketType"] == "capacity-block"
    target = inputs["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target["capacityReservationId"] == "cr-0abc1234def567890"
    assert "groupName" not in (inputs.get("placement") or {})
    gpu_ng = next(
        r for r in resources(block, NG, at_least=2) if r.inputs["amiType"].endswith("NVIDIA")
    )
    assert gpu_ng.inputs["capacityType"] == "CAPACITY_BLOCK"


def test_efa_security_group_allows_all_traffic_to_and_from_itself(p5) -> None:
    (sg,) = resources(p5, SG)
    sg_id = next(i for i in gpu_template(p5).inputs["networkInterfaces"][0]["securityGroups"] if i)
    rules = [
        r
        for kind in ("Ingress", "Egress")
        for r in resources(p5, f"aws:vpc/securityGroup{kind}Rule:SecurityGroup{kind}Rule")
    ]
    assert len(rules) == 2
    for rule in rules:
        assert rule.inputs["securityGroupId"] == sg_id
        assert rule.inputs["referencedSecurityGroupId"] == sg_id
        assert rule.inputs["ipProtocol"] == "-1"
        assert "cidrIpv4" not in rule.inputs
    assert sg.parent == rules[0].parent


def test_gpu_node_group_in_one_subnet_in_the_partitions_zone(p5) -> None:
    gpu_ng = next(
        r for r in resources(p5, NG, at_least=2) if r.inputs["amiType"].endswith("NVIDIA")
    )
    assert len(gpu_ng.inputs["subnetIds"]) == 1
    subnet = next(
        s
        for s in resources(p5, SUBNET)
        if s.inputs.get("cidrBlock") and s.name.endswith("private-0")
    )
    assert subnet.inputs["availabilityZone"] == p5.spec.partitions[0].zones[0]
    assert subnet.inputs["mapPublicIpOnLaunch"] is False
    assert gpu_ng.inputs["scalingConfig"]["maxSize"] == p5.spec.partitions[0].nodes
    assert gpu_ng.inputs["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
    ]
    assert gpu_ng.inputs["labels"]["gpu-clusters/partition"] == "gpu"


def test_iam_roles_carry_only_the_managed_policies_eks_needs(p5) -> None:
    attached = {
        r.name.split("-", 3)[-1]: r.inputs["policyArn"]
        for r in resources(p5, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    }
    assert sorted(attached.values()) == sorted(
        f"arn:aws:iam::aws:policy/{p}"
        for p in (
            "AmazonEKSClusterPolicy",
            "AmazonEKSWorkerNodePolicy",
            "AmazonEC2ContainerRegistryPullOnly",
            *POD_POLICIES,
        )
    )
    services = sorted(
        json.loads(r.inputs["assumeRolePolicy"])["Statement"][0]["Principal"]["Service"]
        for r in resources(p5, "aws:iam/role:Role", at_least=2)
    )
    # the add-ons' Pod Identity roles, and the cluster autoscaler's (an inline policy)
    pod_roles = len(POD_POLICIES) + 1
    assert services == sorted(
        ["ec2.amazonaws.com", "eks.amazonaws.com", *["pods.eks.amazonaws.com"] * pod_roles]
    )


def test_api_authentication_with_an_explicit_admin_access_entry(p5) -> None:
    (cluster,) = resources(p5, "aws:eks/cluster:Cluster")
    assert cluster.inputs["accessConfig"] == {
        "authenticationMode": "API",
        "bootstrapClusterCreatorAdminPermissions": False,
    }
    (entry,) = resources(p5, "aws:eks/accessEntry:AccessEntry")
    assert entry.inputs["principalArn"] == "arn:aws:iam::123456789012:user/plan"
    (assoc,) = resources(p5, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert assoc.inputs["policyArn"].endswith("cluster-access-policy/AmazonEKSClusterAdminPolicy")
    assert assoc.inputs["accessScope"] == {"type": "cluster"}


def test_the_plan_mock_answers_session_contexts_as_iam_does() -> None:
    """The deployer's principal comes from IAM (getSessionContext), not from parsing its ARN."""
    session = "arn:aws:sts::123456789012:assumed-role/Admin/alice@example.com"
    assert _aws_session_context({"arn": session})["issuerArn"] == (
        "arn:aws:iam::123456789012:role/Admin"
    )
    user = "arn:aws:iam::1:user/bob"
    assert _aws_session_context({"arn": user})["issuerArn"] == user


def test_every_taggable_resource_carries_the_stack_tag(p5) -> None:
    aws_resources = [r for r in p5.run.resources if r.custom and r.type.startswith("aws:")]
    assert len(aws_resources) > 20
    for res in aws_resources:
        if res.type in UNTAGGABLE:
            continue
        assert res.inputs.get("tags", {}).get(STACK_TAG) == "aws-p5", res.name
    for spec_ in gpu_template(p5).inputs["tagSpecifications"]:
        assert spec_["tags"][STACK_TAG] == "aws-p5"


def test_kubernetes_objects_are_labelled(p5) -> None:
    for ns in resources(p5, "kubernetes:core/v1:Namespace", at_least=2):
        assert ns.inputs["metadata"]["labels"][STACK_LABEL] == "aws-p5"


def test_addon_charts_are_pinned_to_exact_versions(p5) -> None:
    releases = {r.inputs["name"]: r.inputs for r in resources(p5, RELEASE, at_least=2)}
    assert set(releases) == {
        "gpu-operator",
        "aws-efa-k8s-device-plugin",
        "cluster-autoscaler",
        "prometheus",
    }
    pins = chart_pins(catalog())
    for name, inputs in releases.items():
        assert inputs["version"] == pins[name].version
        assert EXACT_VERSION.match(inputs["version"]), inputs["version"]
    # the versions config/versions.yaml pins today: a bump shows up here as a reviewed change
    assert releases["gpu-operator"]["version"] == "v26.7.0"
    assert releases["aws-efa-k8s-device-plugin"]["version"] == "v0.5.30"
    assert set(FALLBACK_CHARTS) >= set(releases), "every chart has a fallback pin too"
    operator = releases["gpu-operator"]["values"]
    # the EKS NVIDIA AMI already has the driver and the container toolkit
    assert operator["driver"] == {"enabled": False}
    assert operator["toolkit"] == {"enabled": False}
    (mpi,) = resources(p5, "kubernetes:yaml/v2:ConfigFile")
    # applied from the sha256-pinned copy in config/, not fetched at deploy time
    assert re.search(r"/config/manifests/mpi-operator-v\d+\.\d+\.\d+\.yaml$", mpi.inputs["file"])
    assert not mpi.inputs["file"].startswith("http")


def test_outputs_for_the_nccl_launcher_and_a_secret_kubeconfig(p5) -> None:
    outputs = p5.run.outputs
    assert "kubeconfig" in p5.run.secret_outputs
    assert json.loads(outputs["kubeconfig"])["users"][0]["user"]["exec"]["command"] == "aws"
    launcher = outputs["ncclLauncher"]
    assert launcher["resources"]["vpc.amazonaws.com/efa"] == 32
    assert launcher["resources"]["nvidia.com/gpu"] == 8
    assert launcher["nodeSelector"] == {"gpu-clusters/partition": "gpu"}
    assert launcher["workers"] == 2
    assert launcher["slotsPerWorker"] == 8
    sku = catalog().get("p5.48xlarge")
    assert launcher["env"] == {**MPI_ROOT_ENV, **catalog().profile(sku).env}
    assert launcher["env"], "the catalog's EFA profile sets the NCCL/libfabric env"
    assert outputs["addonVersions"]["gpu-operator"] == chart_pins(catalog())["gpu-operator"].version
