"""EksAdminAccess: an EKS access entry (cluster admin) for whoever runs `pulumi up`.

The cluster runs with authentication mode API and no creator bootstrap, so access is explicit.
Managed node groups get their node access entry from EKS itself.
"""

from __future__ import annotations

import re

import pulumi
import pulumi_aws as aws

ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"
_ASSUMED_ROLE = re.compile(r"^arn:([^:]+):sts::(\d+):assumed-role/([^/]+)/.+$")


def principal_arn(caller_arn: str) -> str:
    """Access entries take IAM users and roles, not STS sessions: map a session to its role.

    (A role with a path, e.g. SSO's aws-reserved/..., needs that path; pass such a role's ARN.)
    """
    match = _ASSUMED_ROLE.match(caller_arn)
    if match:
        part, account, role = match.groups()
        return f"arn:{part}:iam::{account}:role/{role}"
    return caller_arn


class EksAdminAccess(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        cluster_name: pulumi.Input[str],
        admin_arn: str,
        partition: str,
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:aws:AdminAccess", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.entry = aws.eks.AccessEntry(
            f"{name}-entry",
            cluster_name=cluster_name,
            principal_arn=admin_arn,
            type="STANDARD",
            tags=tags,
            opts=child,
        )
        self.policy = aws.eks.AccessPolicyAssociation(
            f"{name}-admin",
            cluster_name=cluster_name,
            principal_arn=self.entry.principal_arn,
            policy_arn=f"arn:{partition}:eks::aws:cluster-access-policy/{ADMIN_POLICY}",
            access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
            opts=child,
        )
        self.register_outputs({"principalArn": admin_arn})
