"""What runs beside Kubernetes follows its version: the cluster autoscaler's image (whose minor
must equal the cluster's) and the EKS managed add-ons (resolved for the version at `up`)."""

from __future__ import annotations

import pytest

from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes_addons import helm_addons
from tests.conftest import plan_stack, resources
from tests.unit.spec.test_rules_kubernetes import errors_of, load_stack_spec

ADDON = "aws:eks/addon:Addon"


@pytest.mark.parametrize("version", ["1.35", "1.34", "1.33"])
def test_the_autoscaler_image_has_the_clusters_minor(version: str) -> None:
    """Old code: v1.35.2 whatever the cluster ran."""
    spec, findings = load_stack_spec("aws-p5", [f'kubernetes.version="{version}"'])
    assert not [f for f in findings if f.level == "error"]
    (ca,) = [a for a in helm_addons(spec, "aws-p5", catalog()) if a.release == "cluster-autoscaler"]
    assert ca.values["image"]["tag"].startswith(f"v{version}.")


def test_a_version_without_a_pinned_autoscaler_is_refused() -> None:
    (line,) = errors_of("aws-p5", 'kubernetes.version="1.36"')
    assert line.startswith("gpu-clusters:cluster.kubernetes.version: ")
    assert "helmCharts.clusterAutoscaler.imageTags" in line


def test_eks_addons_carry_the_version_resolved_for_the_clusters_kubernetes() -> None:
    """Old code: no addonVersion; an add-on never moved after creation."""
    addons = resources(plan_stack("aws-p5", 'kubernetes.version="1.34"'), ADDON, at_least=2)
    for addon in addons:
        assert addon.inputs["addonVersion"] == "resolved-at-up-for-kubernetes-1.34"
