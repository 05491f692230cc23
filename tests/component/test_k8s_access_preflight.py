"""EKS admin access for SSO deployers, and the AKS InfiniBand preflight."""

from __future__ import annotations

import pytest

from clusterctl.plan import invokes
from tests.conftest import plan_stack, resources
from tests.unit.spec.test_rules_input import assert_refused

ENTRY = "aws:eks/accessEntry:AccessEntry"


@pytest.fixture(scope="module")
def aks():
    return plan_stack("aks-h100")


# -- the SSO deployer gets admin through its role's issuer ARN ----------------------------

SSO_SESSION = "arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Admin_0a1b2c/alice"
SSO_ROLE = (
    "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Admin_0a1b2c"
)


def test_sso_deployer_gets_an_access_entry_for_the_role_with_its_path(monkeypatch) -> None:
    def caller(_):
        return {"accountId": "123456789012", "arn": SSO_SESSION, "id": "AROA:alice"}

    def session_context(args):  # what IAM answers: the role's ARN with its path
        assert args["arn"] == SSO_SESSION
        return {"arn": SSO_SESSION, "issuerArn": SSO_ROLE, "issuerId": "AROA", "issuerName": "x"}

    monkeypatch.setitem(
        invokes.MOCK_INVOKES, "aws:index/getCallerIdentity:getCallerIdentity", caller
    )
    monkeypatch.setitem(
        invokes.MOCK_INVOKES, "aws:iam/getSessionContext:getSessionContext", session_context
    )
    plan = plan_stack("aws-p5")
    (entry,) = resources(plan, ENTRY)
    assert entry.inputs["principalArn"] == SSO_ROLE


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("kubernetes.adminPrincipalArns=[arn:aws:sts::123456789012:assumed-role/Admin/bob]",
         "is an STS session, not a principal"),
        ("kubernetes.adminPrincipalArns=[admin]", "is not an IAM role or user ARN"),
    ],
)  # fmt: skip
def test_bad_admin_principals_are_refused(override: str, words: str) -> None:
    assert_refused("aws-p5", [override], "kubernetes.adminPrincipalArns[0]", words)


def test_admin_principals_only_on_eks() -> None:
    arn = "arn:aws:iam::123456789012:role/x"
    assert_refused(
        "aks-h100", [f"kubernetes.adminPrincipalArns=[{arn}]"], "kubernetes.adminPrincipalArns",
        "EKS access entries only",
    )  # fmt: skip


def test_admin_principals_override_the_deployer() -> None:
    other = "arn:aws:iam::123456789012:role/platform/ci-deployer"
    plan = plan_stack("aws-p5", f"kubernetes.adminPrincipalArns=[{other}, {SSO_ROLE}]")
    entries = resources(plan, ENTRY, at_least=2)
    assert sorted(e.inputs["principalArn"] for e in entries) == sorted([other, SSO_ROLE])


# -- AKS refuses to start before AKSInfinibandSupport is Registered -----------------------


def test_aks_fails_early_until_infiniband_support_is_registered(monkeypatch) -> None:
    def feature(args):
        return {
            "name": f"{args['providerNamespace']}/{args['featureName']}",
            "properties": {"state": "Registering"},
        }

    monkeypatch.setitem(
        invokes.MOCK_INVOKES, "azure-native:features:getSubscriptionFeatureRegistration", feature
    )
    with pytest.raises(Exception, match=r"AKSInfinibandSupport.*Registering.*az feature register"):
        plan_stack("aks-h100")


def test_registered_feature_plans_the_node_pool(aks) -> None:
    assert resources(aks, "azure-native:containerservice:AgentPool")
