"""EksAdminAccess: an EKS access entry (cluster admin) for whoever runs `pulumi up`.

The cluster runs with authentication mode API and no creator bootstrap, so access is explicit.
Managed node groups get their node access entry from EKS itself.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"


def deployer_principal(caller_arn: str) -> str:
    """The IAM principal behind the credentials running `pulumi up`: IAM's issuer ARN of the
    session, which keeps the role's path (SSO roles live under aws-reserved/sso.amazonaws.com/,
    and an access entry for the role without its path authorises nobody). terraform-aws-eks does
    the same (aws_iam_session_context.issuer_arn for enable_cluster_creator_admin_permissions)."""
    return aws.iam.get_session_context(arn=caller_arn).issuer_arn


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
