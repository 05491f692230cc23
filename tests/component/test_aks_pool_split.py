"""An AKS partition of more than 100 nodes (or maxNodesPerScaleSet) becomes one node pool per
InfiniBand fabric: a pool is a scale set, whose VMs share a fabric only within one placement
group of 100."""

from __future__ import annotations

from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import FABRIC_LABEL, nccl_launcher
from tests.conftest import plan_stack, resources
from tests.unit.spec.test_rules_kubernetes import load_stack_spec

POOL = "azure-native:containerservice:AgentPool"


def _pools(*overrides: str) -> list[dict]:
    return sorted(
        (r.inputs for r in resources(plan_stack("aks-h100", *overrides), POOL)),
        key=lambda p: p["agentPoolName"],
    )


def test_a_partition_of_250_nodes_is_three_pools_of_at_most_100() -> None:
    """Old code: one pool of maxCount 250, nodes on different fabrics in one job."""
    pools = _pools("partitions[0].nodes=250", "partitions[0].minNodes=150")
    assert [p["agentPoolName"] for p in pools] == ["gpu", "gpu1", "gpu2"]
    assert [p["maxCount"] for p in pools] == [100, 100, 50]
    assert [p["minCount"] for p in pools] == [100, 50, 0]
    fabrics = [p["nodeLabels"][FABRIC_LABEL] for p in pools]
    assert fabrics == ["gpu-pg0", "gpu-pg1", "gpu-pg2"]
    assert {p["nodeLabels"]["gpu-clusters/partition"] for p in pools} == {"gpu"}
    for pool in pools:  # the autoscaler knows each pool's fabric label at zero nodes
        key = "k8s.io_cluster-autoscaler_node-template_label_gpu-clusters_fabric"
        assert pool["tags"][key] == pool["nodeLabels"][FABRIC_LABEL]


def test_max_nodes_per_scale_set_sets_the_pool_size() -> None:
    pools = _pools("partitions[0].nodes=10", "partitions[0].maxNodesPerScaleSet=4")
    assert [p["maxCount"] for p in pools] == [4, 4, 2]


def test_a_pool_of_at_most_100_nodes_is_unchanged() -> None:
    (pool,) = _pools("partitions[0].nodes=100")
    assert pool["agentPoolName"] == "gpu" and pool["maxCount"] == 100
    assert FABRIC_LABEL not in pool["nodeLabels"]


def test_validate_runs_on_one_fabric_of_a_split_partition() -> None:
    spec, findings = load_stack_spec("aks-h100", ["partitions[0].nodes=150"])
    launcher = nccl_launcher(spec, "aks-h100", catalog())
    assert launcher["workers"] == 100
    assert launcher["nodeSelector"][FABRIC_LABEL] == "gpu-pg0"
    assert any("split into 100+50 VMs" in f.message for f in findings)
