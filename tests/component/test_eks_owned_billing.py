"""What an EKS cluster bills for that AWS would otherwise make untagged is the stack's own: the
control plane's log group (with a retention) and the EBS volumes of the default StorageClass."""

from __future__ import annotations

import yaml

from clusterctl.render.kubernetes import cluster_manifests
from clusterctl.spec.tags import STACK_TAG, cloud_tags
from tests.conftest import plan_stack, resources
from tests.unit.spec.test_rules_kubernetes import load_stack_spec

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
EKS = "aws:eks/cluster:Cluster"


def test_the_control_plane_log_group_is_the_stacks_own_and_tagged() -> None:
    """Old code: EKS made /aws/eks/<cluster>/cluster itself, untagged and kept forever."""
    plan = plan_stack("aws-p5")
    (cluster,) = resources(plan, EKS)
    (group,) = resources(plan, LOG_GROUP)
    assert group.inputs["name"] == f"/aws/eks/{cluster.inputs['name']}/cluster"
    assert group.inputs["retentionInDays"] > 0
    assert group.inputs["tags"][STACK_TAG] == "aws-p5"
    assert cluster.inputs["enabledClusterLogTypes"]


def test_volumes_of_the_default_storage_class_carry_the_stack_tags() -> None:
    """Old code: the StorageClass gave its volumes no tags, invisible to `down`'s proof."""
    spec, _ = load_stack_spec("aws-p5", [])
    doc = yaml.safe_load(cluster_manifests(spec, "aws-p5")["storage-class.yaml"])
    given = dict(
        value.split("=", 1)
        for key, value in doc["parameters"].items()
        if key.startswith("tagSpecification_")
    )
    assert given == cloud_tags(spec, "aws-p5")
