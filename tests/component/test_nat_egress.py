"""The nodes' subnets leave only through a NAT gateway with one static public IP
(defaultOutboundAccess false), and plan prices its hours. Before: no egress resource at all, so a
VNet made on network API 2025-07-01 or later, or a landing zone's "Subnets should be private"
policy, left the nodes with no way to their packages."""

from __future__ import annotations

from clusterctl import outputs as out
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour
from clusterctl.spec.load import load_stack_spec
from tests.conftest import plan_stack, resources

NAT = "azure-native:network:NatGateway"
IP = "azure-native:network:PublicIPAddress"
SUBNET = "azure-native:network:Subnet"


def test_both_subnets_leave_through_one_nat_gateway_and_its_static_ip() -> None:
    plan = plan_stack("azure-h100")
    (nat,) = resources(plan, NAT)
    ips = [r for r in resources(plan, IP) if r.name.endswith("-egress-ip")]
    (ip,) = ips
    assert ip.inputs["sku"]["name"] == "Standard"
    assert ip.inputs["publicIPAllocationMethod"] == "Static"
    assert nat.inputs["sku"]["name"] == "Standard"
    (attached,) = nat.inputs["publicIpAddresses"]
    assert attached["id"].endswith(f"/{ip.name}")
    subnets = resources(plan, SUBNET, at_least=2)
    for subnet in subnets:
        assert subnet.inputs["natGateway"]["id"].endswith(f"/{nat.name}"), subnet.name
        assert subnet.inputs["defaultOutboundAccess"] is False, subnet.name
    for r in (nat, ip):
        assert r.inputs["tags"]["gpu-clusters:stack"] == "azure-h100"
    assert out.EGRESS_ADDRESS in plan.run.outputs


def test_plan_prices_the_nat_hours_where_the_stack_builds_one() -> None:
    cat = catalog()
    for stack, expected in (("azure-h100", True), ("aws-p5", True), ("aks-h100", False)):
        spec, _ = load_stack_spec(stack, [])
        lines = {line.sku: line for line in cost_per_hour(spec, cat).lines if line.service}
        assert ("natGateway" in lines) is expected, stack
        if expected:
            assert lines["natGateway"].usd_per_hour_each == 0.045
            assert lines["natGateway"].usd_per_gb_processed == 0.045
            assert lines["publicIp"].usd_per_hour_each == 0.005


def test_status_names_the_egress_address_and_older_stacks_have_none() -> None:
    from clusterctl.lifecycle.status import egress

    base = {"scheduler": "slurm", "sshCommand": "ssh azureuser@20.55.10.4"}
    assert egress({**base, out.EGRESS_ADDRESS: "20.1.2.3"}) == "20.1.2.3"
    assert egress(base) is None  # a stack from before the NAT gateway
    assert egress({"scheduler": "kubernetes", "kubernetesVersion": "1.31"}) is None


def test_an_older_subnet_keeps_updating_after_default_outbound_access_came() -> None:
    """Azure sets defaultOutboundAccess only when a subnet is created: a stack whose subnets
    predate it failed every update trying to set it false. Both subnets ignore changes to it."""
    plan = plan_stack("azure-h100")
    for subnet in resources(plan, SUBNET, at_least=2):
        assert "defaultOutboundAccess" in subnet.ignore_changes, subnet.name
        assert "defaultOutboundAccess" not in subnet.replace_on_changes, subnet.name
