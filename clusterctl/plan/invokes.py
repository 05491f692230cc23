"""Plausible answers for every provider function (invoke) the program calls, for the mock engine."""

from __future__ import annotations

import re
from collections.abc import Callable

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
TENANT = "33333333-3333-3333-3333-333333333333"


def _azure_client_config(_: dict) -> dict:
    return {
        "clientId": "44444444-4444-4444-4444-444444444444",
        "objectId": "55555555-5555-5555-5555-555555555555",
        "subscriptionId": SUBSCRIPTION,
        "tenantId": TENANT,
    }


def _aws_caller(_: dict) -> dict:
    return {"accountId": "123456789012", "arn": "arn:aws:iam::123456789012:user/plan", "id": "plan"}


def _aws_session_context(args: dict) -> dict:
    """What IAM answers: an STS session's role ARN with the role's path (SSO's permission-set
    roles live under aws-reserved/sso.amazonaws.com/); anything else is its own issuer."""
    arn = args.get("arn", "")
    match = re.match(r"^arn:([^:]+):sts::(\d+):assumed-role/([^/]+)/(.+)$", arn)
    if not match:
        return {"arn": arn, "issuerArn": arn, "issuerId": "", "issuerName": "", "id": arn}
    part, account, role, _ = match.groups()
    path = "aws-reserved/sso.amazonaws.com/" if role.startswith("AWSReservedSSO_") else ""
    issuer = f"arn:{part}:iam::{account}:role/{path}{role}"
    return {"arn": arn, "issuerArn": issuer, "issuerId": "AROA", "issuerName": role, "id": arn}


def _aws_partition(_: dict) -> dict:
    return {"partition": "aws", "dnsSuffix": "amazonaws.com", "id": "aws"}


def _aws_azs(_: dict) -> dict:
    names = ["us-east-1a", "us-east-1b", "us-east-1c"]
    return {"names": names, "zoneIds": ["use1-az1", "use1-az2", "use1-az4"], "id": "us-east-1"}


def _aws_ssm(args: dict) -> dict:
    name = str(args.get("name") or "")
    value = "ami-0123456789abcdef0"
    if name.endswith("/release_version"):  # as EKS names AMI releases: <k8s>.<patch>-<date>
        version = name.split("/optimized-ami/", 1)[1].split("/", 1)[0]
        value = f"{version}.0-20260101"
    return {"name": name, "value": value, "type": "String"}


ADDON_VERSION_K8S_ARG = "kubernetesVersion"
"""aws.eks.getAddonVersion's input (an invoke argument, not the stack output of that name)."""


def _aws_addon_version(args: dict) -> dict:
    version = f"resolved-at-up-for-kubernetes-{args.get(ADDON_VERSION_K8S_ARG)}"
    return {**args, "id": args.get("addonName"), "version": version}


def _aws_region(_: dict) -> dict:
    return {"name": "us-east-1", "region": "us-east-1", "id": "us-east-1"}


MOCK_INVOKES: dict[str, Callable[[dict], dict]] = {
    "azure-native:authorization:getClientConfig": _azure_client_config,
    "aws:index/getCallerIdentity:getCallerIdentity": _aws_caller,
    "aws:index/getPartition:getPartition": _aws_partition,
    "aws:iam/getSessionContext:getSessionContext": _aws_session_context,
    "aws:index/getAvailabilityZones:getAvailabilityZones": _aws_azs,
    "aws:index/getRegion:getRegion": _aws_region,
    "aws:ssm/getParameter:getParameter": _aws_ssm,
    "aws:eks/getAddonVersion:getAddonVersion": _aws_addon_version,
}


def _aks_user_credentials(args: dict) -> dict:
    """AKS's exec-format user kubeconfig for an Entra ID cluster: kubelogin, no secret."""
    import base64

    name = args.get("resourceName", "aks")
    kubeconfig = (
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: {name}, cluster: {{server: 'https://{name}.hcp.mock.azmk8s.io:443', "
        "certificate-authority-data: bW9jaw==}}]\n"
        f"contexts: [{{name: {name}, context: {{cluster: {name}, user: clusterUser}}}}]\n"
        f"current-context: {name}\n"
        "users: [{name: clusterUser, user: {exec: {command: kubelogin, "
        "args: [get-token, --login, devicecode]}}}]\n"
    )
    return {
        "kubeconfigs": [
            {"name": "clusterUser", "value": base64.b64encode(kubeconfig.encode()).decode()}
        ]
    }


def _azure_feature_registration(args: dict) -> dict:
    """Registered: the plan shows what `up` builds once the preflight passes (rules_k8s says so)."""
    name = f"{args.get('providerNamespace')}/{args.get('featureName')}"
    return {"name": name, "properties": {"state": "Registered"}}


MOCK_INVOKES["azure-native:features:getSubscriptionFeatureRegistration"] = (
    _azure_feature_registration
)
MOCK_INVOKES["azure-native:containerservice:listManagedClusterUserCredentials"] = (
    _aks_user_credentials
)
