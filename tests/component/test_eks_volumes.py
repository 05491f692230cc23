"""Persistent volumes on EKS bind: the EBS CSI driver as an EKS add-on whose controller alone
gets the EBS policy (EKS Pod Identity), and a default encrypted gp3 StorageClass; AKS pods can
use workload identity (an Entra ID identity per service account, no secret)."""

from __future__ import annotations

import pytest
import yaml

from clusterctl.render.bundle import render_bundle
from clusterctl.spec.load import load_stack_spec
from tests.conftest import plan_stack, resources

ADDON = "aws:eks/addon:Addon"
ROLE = "aws:iam/role:Role"
ATTACH = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"


@pytest.fixture(scope="module")
def p5():
    return plan_stack("aws-p5")


def test_ebs_csi_driver_is_an_eks_addon_with_its_own_role(p5) -> None:
    """Old code: no EBS CSI driver, so every PersistentVolumeClaim stayed Pending."""
    (ebs,) = [
        a for a in resources(p5, ADDON, at_least=4) if a.inputs["addonName"] == "aws-ebs-csi-driver"
    ]
    (assoc,) = ebs.inputs["podIdentityAssociations"]
    assert assoc["serviceAccount"] == "ebs-csi-controller-sa"
    arn = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
    (role,) = [r for r in resources(p5, ROLE, at_least=3) if r.name.endswith("-ebs-csi-driver-pod")]
    # an attachment is named <role>-<policy> (the role's own name is unknown before `up`)
    holders = {a.name for a in resources(p5, ATTACH, at_least=4) if a.inputs["policyArn"] == arn}
    assert holders == {f"{role.name}-AmazonEBSCSIDriverPolicy"}  # not the node role's


def test_eks_gets_a_default_encrypted_storage_class() -> None:
    spec, _ = load_stack_spec("aws-p5")
    files = render_bundle(spec, "aws-p5")
    (doc,) = yaml.safe_load_all(files["k8s/manifests/storage-class.yaml"])
    assert doc["kind"] == "StorageClass"
    assert doc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true"
    assert doc["provisioner"] == "ebs.csi.aws.com"
    params = dict(doc["parameters"])
    tags = {k: params.pop(k) for k in list(params) if k.startswith("tagSpecification_")}
    assert params == {"type": "gp3", "encrypted": "true"}
    assert tags  # the stack's tags on every volume (tests/component/test_eks_owned_billing.py)
    assert doc["volumeBindingMode"] == "WaitForFirstConsumer"
    aks, _ = load_stack_spec("aks-h100")
    assert "k8s/manifests/storage-class.yaml" not in render_bundle(aks, "aks-h100")


def test_eks_storage_class_is_applied(p5) -> None:
    (sc,) = resources(p5, "kubernetes:storage.k8s.io/v1:StorageClass")
    assert sc.inputs["provisioner"] == "ebs.csi.aws.com"
    assert sc.inputs["parameters"]["encrypted"] == "true"


def test_aks_has_workload_identity() -> None:
    (cluster,) = resources(plan_stack("aks-h100"), "azure-native:containerservice:ManagedCluster")
    assert cluster.inputs["oidcIssuerProfile"] == {"enabled": True}
    assert cluster.inputs["securityProfile"]["workloadIdentity"] == {"enabled": True}
