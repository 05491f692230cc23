"""kubernetes.sharedFilesystem: FSx for Lustre on EKS, its security group open on
Lustre's ports to the nodes only, the FSx CSI driver as an EKS add-on, and a static volume with
its ReadWriteMany claim in the training namespace; refused, with one line, where it is not built.
Every assertion loop goes through tests.conftest.resources (it fails when nothing was found)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from clusterctl.errors import SpecError
from clusterctl.render.kubernetes import FILLED_AT_UP, render_k8s_bundle
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour
from clusterctl.spec.kubernetes import VALIDATION_NAMESPACE
from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.tags import STACK_LABEL, STACK_TAG
from clusterctl.spec.update_policy import diff, refusal
from tests.conftest import plan_stack, resources

FS = "kubernetes.sharedFilesystem"
ON = f"{FS}.kind=lustre"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
ADDON = "aws:eks/addon:Addon"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"


@pytest.fixture(scope="module")
def lustre():
    return plan_stack("aws-p5", ON, "kubernetes.sharedFilesystem.sizeGib=2400")


def test_fsx_lustre_file_system_is_persistent_2_and_protected(lustre) -> None:
    """Old code: kubernetes.sharedFilesystem did not exist (the key was refused)."""
    (fs,) = resources(lustre, FSX)
    assert fs.inputs["deploymentType"] == "PERSISTENT_2"
    assert fs.inputs["storageType"] == "SSD"
    assert fs.inputs["storageCapacity"] == 2400
    assert fs.inputs["perUnitStorageThroughput"] == 125
    assert fs.protect  # keepOnDestroy defaults to true, like Slurm's /home
    (own,) = [r for r in resources(lustre, INGRESS, at_least=6) if r.name.endswith("-self-988")]
    assert fs.inputs["securityGroupIds"] == [own.inputs["securityGroupId"]]
    # in the subnet (so the zone) of the default partition's GPU node group
    groups = resources(lustre, "aws:eks/nodeGroup:NodeGroup", at_least=2)
    (gpu,) = [g for g in groups if g.name.endswith("-gpu-ng")]
    assert fs.inputs["subnetIds"] == gpu.inputs["subnetIds"][0]


def test_keep_on_destroy_false_leaves_it_unprotected() -> None:
    plan = plan_stack("aws-p5", ON, "kubernetes.sharedFilesystem.keepOnDestroy=false")
    (fs,) = resources(plan, FSX)
    assert not fs.protect


def test_lustre_ports_open_to_the_nodes_and_the_servers_only(lustre) -> None:
    rules = [r for r in resources(lustre, INGRESS, at_least=6) if "-lustre-" in r.name]
    assert len(rules) == 6
    ports = {(r.inputs["fromPort"], r.inputs["toPort"]) for r in rules}
    assert ports == {(988, 988), (1018, 1023)}
    for rule in rules:
        assert rule.inputs["ipProtocol"] == "tcp"
        # a group reference (itself, or the EKS cluster group every node carries), never a CIDR
        assert not {"cidrIpv4", "cidrIpv6", "prefixListId"} & set(rule.inputs), rule.name
    egress = [r for r in resources(lustre, EGRESS, at_least=2) if "-lustre-" in r.name]
    assert len(egress) == 2
    assert all(r.inputs["ipProtocol"] == "tcp" and "cidrIpv4" not in r.inputs for r in egress)
    assert {(r.inputs["fromPort"], r.inputs["toPort"]) for r in egress} == {(988, 1023)}


def test_fsx_csi_driver_is_an_eks_addon_without_a_role(lustre) -> None:
    """Static provisioning mounts the stack's own file system: no AWS call, so no AWS policy."""
    (fsx,) = [
        a
        for a in resources(lustre, ADDON, at_least=6)
        if a.inputs["addonName"] == "aws-fsx-csi-driver"
    ]
    assert not fsx.inputs.get("podIdentityAssociations")
    attached = [
        a.inputs["policyArn"]
        for a in resources(lustre, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", at_least=4)
    ]
    assert not [arn for arn in attached if "FSx" in arn]


def test_static_volume_and_claim_bind_in_the_training_namespace(lustre) -> None:
    (fs,) = resources(lustre, FSX)
    (pv,) = resources(lustre, PV)
    (pvc,) = resources(lustre, PVC)
    spec = pv.inputs["spec"]
    assert spec["csi"]["driver"] == "fsx.csi.aws.com"
    # the file system's id, from the FSx resource (the mock engine's id), not a placeholder
    assert spec["csi"]["volumeHandle"].startswith("lustrefilesystem-")
    assert spec["persistentVolumeReclaimPolicy"] == "Retain"  # Kubernetes never deletes it
    assert spec["accessModes"] == ["ReadWriteMany"] == pvc.inputs["spec"]["accessModes"]
    assert spec["capacity"] == {"storage": "2400Gi"}
    assert spec["claimRef"] == {"namespace": VALIDATION_NAMESPACE, "name": "shared"}
    assert pvc.inputs["metadata"]["namespace"] == VALIDATION_NAMESPACE
    assert pvc.inputs["metadata"]["name"] == "shared"
    assert pvc.inputs["spec"]["volumeName"] == pv.inputs["metadata"]["name"]
    assert pvc.inputs["spec"]["storageClassName"] == "" == spec["storageClassName"]
    assert fs.inputs["storageCapacity"] == 2400


def test_every_new_resource_carries_the_stack_tag(lustre) -> None:
    new = [
        *resources(lustre, FSX), *resources(lustre, SG, at_least=2),
        *resources(lustre, INGRESS, at_least=6), *resources(lustre, EGRESS, at_least=2),
        *resources(lustre, ADDON, at_least=6),
    ]  # fmt: skip
    for res in new:
        assert res.inputs["tags"][STACK_TAG] == "aws-p5", res.name
    for res in [*resources(lustre, PV), *resources(lustre, PVC)]:
        assert res.inputs["metadata"]["labels"][STACK_LABEL] == "aws-p5", res.name


def test_off_by_default_and_nothing_else_changes() -> None:
    plain = plan_stack("aws-p5")
    assert not plain.run.by_type(FSX) and not plain.run.by_type(PV)
    assert "aws-fsx-csi-driver" not in {
        a.inputs["addonName"] for a in resources(plain, ADDON, at_least=5)
    }
    spec, _ = load_stack_spec("aws-p5")
    assert "manifests/shared-filesystem.yaml" not in render_k8s_bundle(spec, "aws-p5")


def test_plan_out_writes_the_volume_and_claim() -> None:
    spec, _ = load_stack_spec("aws-p5", [ON])
    text = render_k8s_bundle(spec, "aws-p5")["manifests/shared-filesystem.yaml"]
    assert "kind: PersistentVolume\n" in text and "kind: PersistentVolumeClaim\n" in text
    assert FILLED_AT_UP in text  # the program fills these from the file system's outputs


def test_cost_per_hour_from_the_catalog() -> None:
    spec, _ = load_stack_spec("aws-p5", [ON, "kubernetes.sharedFilesystem.sizeGib=2400"])
    (line,) = [c for c in cost_per_hour(spec, catalog()).lines if "Lustre" in c.item]
    assert line.usd_per_hour == pytest.approx(2400 * 0.145 / 730, abs=1e-4)
    # a tier with no sourced price is an unpriced line, not a guess
    spec, _ = load_stack_spec(
        "aws-p5", [ON, "kubernetes.sharedFilesystem.throughputMbpsPerTib=500"]
    )
    cost = cost_per_hour(spec, catalog())
    assert cost.unpriced == ["shared file system (FSx for Lustre)"]


@pytest.mark.parametrize(
    ("stack", "overrides", "field", "says"),
    [
        ("aws-p5", ["kubernetes.sharedFilesystem.sizeGib=3000"], "sizeGib", "use 2400 or 4800"),
        ("aws-p5", ["kubernetes.sharedFilesystem.sizeGib=1800"], "sizeGib", "use 1200 or 2400"),
        ("aws-p5", [f"{FS}.throughputMbpsPerTib=200"], "throughputMbpsPerTib", "125, 250, 500"),
        ("aks-h100", [], "sharedFilesystem", "Azure Managed Lustre needs a subnet of its own"),
    ],
)  # fmt: skip
def test_each_refusal_names_the_field_and_the_fix(stack, overrides, field, says) -> None:
    with pytest.raises(SpecError) as err:
        load_stack_spec(stack, [ON, *overrides])
    (finding,) = [f for f in err.value.findings if f.level == "error"]
    assert finding.field.endswith(field) and says in finding.message, finding


@pytest.mark.parametrize("size", [1200, 2400, 4800, 72000])
def test_sizes_fsx_makes_pass(size: int) -> None:
    spec, findings = load_stack_spec("aws-p5", [ON, f"kubernetes.sharedFilesystem.sizeGib={size}"])
    assert spec.kubernetes.shared_filesystem is not None
    assert spec.kubernetes.shared_filesystem.size_gib == size
    assert not [f for f in findings if "sharedFilesystem" in f.field], findings


def test_the_cli_refuses_with_exit_2_and_one_line() -> None:
    got = subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "aws-p5", "--set", ON,
         "--set", "kubernetes.sharedFilesystem.throughputMbpsPerTib=300"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert got.returncode == 2, got.stderr[-2000:]
    lines = [ln for ln in got.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "throughputMbpsPerTib" in lines[0], got.stderr
    assert "Traceback" not in got.stderr


def test_removing_it_is_a_replacement_adding_it_is_not() -> None:
    off, _ = load_stack_spec("aws-p5")
    on, _ = load_stack_spec("aws-p5", [ON])
    assert refusal(diff(off, on), allow_replace=False) is None
    gone = refusal(diff(on, off), allow_replace=False)
    assert gone and "sharedFilesystem" in gone and "--allow-replace" in gone
    bigger, _ = load_stack_spec("aws-p5", [ON, "kubernetes.sharedFilesystem.sizeGib=2400"])
    assert refusal(diff(on, bigger), allow_replace=False) is None
