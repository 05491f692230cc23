"""The spec side of a private API server, AKS's authorization choice and its control plane tier:
conflicts refused in one line naming the field, the Standard tier in `plan`'s bill (the
components: tests/component/test_kubernetes_network_and_access.py)."""

from __future__ import annotations

import pytest

from clusterctl.errors import SpecError
from clusterctl.project import config_dir
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour, idle_cost_per_hour
from tests.unit.spec.test_rules_kubernetes import errors_of, load_stack_spec, plan_cli

STACKS = ("aws-p5", "aks-h100")
PRIVATE = "kubernetes.privateApiServer=true"
GROUP = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"


@pytest.mark.parametrize("stack", STACKS)
def test_a_private_api_server_from_private_ranges_is_accepted_with_a_warning(stack) -> None:
    ranges = "ssh.allowedCidrs=[10.8.0.0/16, 192.168.4.0/24]"
    _, findings = load_stack_spec(stack, [PRIVATE, ranges])
    assert not [f for f in findings if f.level == "error"]
    (warning,) = [f for f in findings if (f.field or "").endswith(".privateApiServer")]
    assert warning.level == "warning" and "run `up`" in warning.message


@pytest.mark.parametrize("stack", STACKS)
def test_a_private_api_server_from_a_public_range_is_refused(stack) -> None:
    (line,) = errors_of(stack, PRIVATE, "ssh.allowedCidrs=[10.8.0.0/16, 203.0.113.0/24]")
    assert line.startswith("gpu-clusters:cluster.ssh.allowedCidrs[1]: 203.0.113.0/24 is not a")
    assert "VPN or peering" in line


@pytest.mark.parametrize("stack", STACKS)
def test_a_private_api_server_nobody_can_reach_is_refused(stack) -> None:
    (line,) = errors_of(stack, PRIVATE, "ssh.allowedCidrs=[]")
    assert line.startswith("gpu-clusters:cluster.ssh.allowedCidrs: empty: with kubernetes.private")
    assert "not even `up`" in line


def test_a_private_range_inside_the_clusters_own_network_is_refused() -> None:
    (line,) = errors_of("aws-p5", PRIVATE, "ssh.allowedCidrs=[10.40.8.0/24]")
    assert line.startswith("gpu-clusters:cluster.ssh.allowedCidrs[0]: ")
    assert "overlaps network.addressSpace" in line


@pytest.mark.parametrize("stack", STACKS)
def test_plan_refuses_a_private_api_server_with_a_public_range_in_one_line_exit_2(stack) -> None:
    proc = plan_cli(config_dir(), "-s", stack, "--set", PRIVATE)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert line.startswith("error: gpu-clusters:cluster.ssh.allowedCidrs[0]: ")


def test_kubernetes_rbac_without_admin_groups_is_refused() -> None:
    (line,) = errors_of("aks-h100", "kubernetes.authorization=kubernetes-rbac")
    assert line.startswith("gpu-clusters:cluster.kubernetes.adminGroupObjectIds: empty with")
    _, findings = load_stack_spec(
        "aks-h100",
        ["kubernetes.authorization=kubernetes-rbac", f"kubernetes.adminGroupObjectIds=[{GROUP}]"],
    )
    assert not [f for f in findings if f.level == "error"]
    (sign_in,) = [f for f in findings if "Entra ID" in f.message]
    assert "Kubernetes RBAC decides access" in sign_in.message


def test_admin_groups_with_azure_rbac_are_refused() -> None:
    (line,) = errors_of("aks-h100", f"kubernetes.adminGroupObjectIds=[{GROUP}]")
    assert line.startswith("gpu-clusters:cluster.kubernetes.adminGroupObjectIds: only with")


def test_an_admin_group_must_be_an_object_id() -> None:
    with pytest.raises(SpecError, match=r"adminGroupObjectIds\[0\]: 'ops' has the wrong form"):
        load_stack_spec(
            "aks-h100",
            ["kubernetes.authorization=kubernetes-rbac", "kubernetes.adminGroupObjectIds=[ops]"],
        )


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("kubernetes.authorization=kubernetes-rbac", "authorization"),
        (f"kubernetes.adminGroupObjectIds=[{GROUP}]", "adminGroupObjectIds"),
        ("kubernetes.aksTier=free", "aksTier"),
    ],
)
def test_aks_settings_on_eks_are_refused(override, field) -> None:
    (line,) = errors_of("aws-p5", override)
    assert line == f"gpu-clusters:cluster.kubernetes.{field}: AKS only: remove it"


def test_the_standard_tier_is_in_the_aks_bill_and_the_free_tier_is_not() -> None:
    cat = catalog()
    spec, _ = load_stack_spec("aks-h100", [])
    lines = {x.sku: x for x in cost_per_hour(spec, cat).lines if x.service}
    assert lines["aksStandardTier"].usd_per_hour == pytest.approx(0.10)
    free, _ = load_stack_spec("aks-h100", ["kubernetes.aksTier=free"])
    assert "aksStandardTier" not in {x.sku for x in cost_per_hour(free, cat).lines}
    assert idle_cost_per_hour(spec, cat) - idle_cost_per_hour(free, cat) == pytest.approx(0.10)


def test_eks_has_no_tier_line() -> None:
    spec, _ = load_stack_spec("aws-p5", [])
    assert "aksStandardTier" not in {x.sku for x in cost_per_hour(spec, catalog()).lines}
