"""A spot GPU pool on AKS: AKS taints its nodes kubernetes.azure.com/scalesetpriority=spot:
NoSchedule, so every pod meant for a GPU node tolerates that too, and the autoscaler's node
template names the taint (else it thinks a pending worker fits a node that refuses it)."""

from __future__ import annotations

import pytest
import yaml

from clusterctl.render.kubernetes import render_k8s_bundle
from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import (
    aks_node_template_tags,
    autoscaler_node_template,
    eks_node_template_tags,
    nccl_launcher,
)
from tests.unit.spec.test_rules_kubernetes import load_stack_spec

SPOT = {
    "key": "kubernetes.azure.com/scalesetpriority",
    "operator": "Equal",
    "value": "spot",
    "effect": "NoSchedule",
}


def _tolerations(doc) -> list[list[dict]]:
    """Every `tolerations` list anywhere in a YAML document."""
    found: list[list[dict]] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "tolerations" and isinstance(value, list):
                found.append(value)
            else:
                found += _tolerations(value)
    elif isinstance(doc, list):
        for item in doc:
            found += _tolerations(item)
    return found


def _all_tolerations(stack: str, overrides: list[str]) -> dict[str, list[list[dict]]]:
    spec, _ = load_stack_spec(stack, overrides)
    bundle = render_k8s_bundle(spec, stack)
    return {
        path: lists
        for path, text in bundle.items()
        if (lists := _tolerations(list(yaml.safe_load_all(text))))
    }


def test_every_gpu_toleration_on_a_spot_aks_pool_tolerates_the_spot_taint() -> None:
    """Old code: only nvidia.com/gpu everywhere, so no driver, DOCA driver or worker landed."""
    found = _all_tolerations("aks-h100", ["partitions[0].spot=true"])
    gpu_lists = {
        path: [ts for ts in lists if any(t.get("key") == "nvidia.com/gpu" for t in ts)]
        for path, lists in found.items()
    }
    checked = [path for path, lists in gpu_lists.items() if lists]
    for must in (
        "helm/gpu-operator.values.yaml",
        "helm/network-operator.values.yaml",
        "manifests/nic-cluster-policy.yaml",
        "validation/nccl-tests-mpijob.yaml",
        "validation/train-mpijob.yaml",
    ):
        assert must in checked
    for path in checked:
        for ts in gpu_lists[path]:
            assert SPOT in ts, path


def test_a_regular_aks_pool_and_eks_spot_do_not_tolerate_the_aks_spot_taint() -> None:
    for stack, overrides in (("aks-h100", []), ("aws-p5", ["partitions[0].spot=true"])):
        for path, lists in _all_tolerations(stack, overrides).items():
            for ts in lists:
                assert SPOT not in ts, (stack, path)


def test_the_launcher_of_a_spot_aks_pool_tolerates_the_spot_taint() -> None:
    spec, _ = load_stack_spec("aks-h100", ["partitions[0].spot=true"])
    assert SPOT in nccl_launcher(spec, "aks-h100", catalog())["tolerations"]


@pytest.mark.parametrize("spot", [True, False])
def test_aks_autoscaler_template_names_the_spot_taint_only_on_spot_pools(spot: bool) -> None:
    """Old code: the template listed only the GPU taint on a spot pool."""
    spec, _ = load_stack_spec("aks-h100", [f"partitions[0].spot={str(spot).lower()}"])
    tags = aks_node_template_tags(autoscaler_node_template(spec.partitions[0], catalog(), {}))
    key = "k8s.io_cluster-autoscaler_node-template_taint_kubernetes.azure.com_scalesetpriority"
    assert tags.get(key) == ("spot:NoSchedule" if spot else None)


def test_eks_spot_node_groups_have_no_spot_taint_in_the_template() -> None:
    spec, _ = load_stack_spec("aws-p5", ["partitions[0].spot=true"])
    tags = eks_node_template_tags(autoscaler_node_template(spec.partitions[0], catalog(), {}))
    assert [k for k in tags if "/taint/" in k] == [
        "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"
    ]
