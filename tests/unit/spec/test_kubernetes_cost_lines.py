"""`plan`'s bill of a Kubernetes cluster includes what the cluster itself bills by the hour,
idle or not: EKS's control plane; AKS's load balancer and its outbound public IP."""

from __future__ import annotations

import pytest

from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour, idle_cost_per_hour
from tests.unit.spec.test_rules_kubernetes import load_stack_spec


@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        ("aws-p5", {"eksControlPlane": 0.10}),
        ("aks-h100", {"aksLoadBalancer": 0.025, "aksOutboundIp": 0.005}),
    ],
)
def test_the_clusters_own_hourly_services_are_in_the_bill(stack, expected) -> None:
    """Old code: no control plane fee on EKS, no load balancer or IP on AKS."""
    cat = catalog()
    spec, _ = load_stack_spec(stack, [])
    lines = {line.sku: line for line in cost_per_hour(spec, cat).lines if line.service}
    for key, price in expected.items():
        assert lines[key].usd_per_hour == pytest.approx(price)
        assert lines[key].price_as_of
    services = sum(line.usd_per_hour for line in lines.values())
    system = next(x for x in cost_per_hour(spec, cat).lines if x.item == "system nodes")
    assert idle_cost_per_hour(spec, cat) == pytest.approx(system.usd_per_hour + services, abs=0.01)


def test_a_slurm_cluster_has_no_kubernetes_service_lines() -> None:
    spec, _ = load_stack_spec("azure-h100", [])
    keys = {line.sku for line in cost_per_hour(spec, catalog()).lines}
    assert not keys & {"eksControlPlane", "aksLoadBalancer", "aksOutboundIp"}
