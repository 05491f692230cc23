"""`up`'s preview names every edit that replaces Kubernetes nodes: on EKS a tag edit (a new
launch template version) and on both clouds a Kubernetes version bump (the node groups and pools
carry the version)."""

from __future__ import annotations

import pytest

from clusterctl.spec.update_policy import diff, refusal
from tests.unit.spec.test_rules_kubernetes import load_stack_spec


def _change(stack: str, edit: str):
    old, _ = load_stack_spec(stack, [])
    new, _ = load_stack_spec(stack, [edit])
    (change,) = diff(old, new)
    return change


def test_an_eks_tag_edit_says_it_replaces_every_gpu_node() -> None:
    """Old code: 'in place, every resource's tags' while EKS rolled every GPU node."""
    change = _change("aws-p5", "tags.team=ml")
    assert change.policy == "replaces" and change.loses
    assert "launch template" in change.affects and "GPU node" in change.affects
    assert "--allow-replace" in (refusal([change], allow_replace=False) or "")


def test_an_aks_tag_edit_stays_in_place() -> None:
    change = _change("aks-h100", "tags.team=ml")
    assert change.policy == "in place" and not change.loses


@pytest.mark.parametrize("stack", ["aws-p5", "aks-h100"])
def test_a_kubernetes_version_bump_says_it_replaces_the_nodes(stack: str) -> None:
    change = _change(stack, 'kubernetes.version="1.34"')
    assert change.path == "kubernetes.version"
    assert change.policy == "replaces" and "every Kubernetes node" in change.affects
