"""EksIamRoles: the cluster, node and add-on roles, each with only the managed policies it needs.

Cluster: AmazonEKSClusterPolicy. Nodes: AmazonEKSWorkerNodePolicy and
AmazonEC2ContainerRegistryPullOnly (pull, not the wider ReadOnly). The VPC CNI's
AmazonEKS_CNI_Policy (it may create and delete any ENI in the account) is not on the node role,
where every pod that reaches IMDS could use it, but on a role only the `aws-node` service account
gets through EKS Pod Identity (EKS best practices, "Restrict access to the instance profile").
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.tags import cloud_tags

CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly")
POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"
POD_ROLES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # add-on -> (namespace, service account, managed policies) of the role Pod Identity hands it
    "vpc-cni": ("kube-system", "aws-node", ("AmazonEKS_CNI_Policy",)),
    # the EBS CSI controller creates, attaches and deletes volumes; its node pods need no AWS
    "aws-ebs-csi-driver": (
        "kube-system",
        "ebs-csi-controller-sa",
        ("service-role/AmazonEBSCSIDriverPolicy",),
    ),
}


def trust_policy(service: str) -> str:
    # EKS Pod Identity also tags the session (the cluster, namespace and service account)
    actions = ["sts:AssumeRole", "sts:TagSession"] if service == POD_IDENTITY_SERVICE else None
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": service},
                    "Action": actions or "sts:AssumeRole",
                }
            ],
        }
    )


class EksIamRoles(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        spec: ClusterSpec,
        stack: str,
        partition: str,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:aws:IamRoles", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = cloud_tags(spec, stack)
        self.cluster_role = aws.iam.Role(
            f"{name}-cluster",
            assume_role_policy=trust_policy("eks.amazonaws.com"),
            description=f"EKS control plane of {spec.name} ({stack})",
            tags=tags,
            opts=child,
        )
        self.node_role = aws.iam.Role(
            f"{name}-node",
            assume_role_policy=trust_policy("ec2.amazonaws.com"),
            description=f"EKS nodes of {spec.name} ({stack})",
            tags=tags,
            opts=child,
        )
        self.pod_roles = {
            addon: aws.iam.Role(
                f"{name}-{addon}-pod",
                assume_role_policy=trust_policy(POD_IDENTITY_SERVICE),
                description=f"EKS Pod Identity role of {namespace}/{account} ({addon}) in "
                f"{spec.name} ({stack})",
                tags=tags,
                opts=child,
            )
            for addon, (namespace, account, _) in POD_ROLES.items()
        }
        self.attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-{kind}-{policy.rsplit('/', 1)[-1]}",
                role=role.name,
                policy_arn=f"arn:{partition}:iam::aws:policy/{policy}",
                opts=child,
            )
            for kind, role, policies in (
                ("cluster", self.cluster_role, CLUSTER_POLICIES),
                ("node", self.node_role, NODE_POLICIES),
                *((f"{a}-pod", self.pod_roles[a], p) for a, (_, _, p) in POD_ROLES.items()),
            )
            for policy in policies
        ]
        self.register_outputs(
            {
                "clusterRoleArn": self.cluster_role.arn,
                "nodeRoleArn": self.node_role.arn,
                **{f"{addon}RoleArn": role.arn for addon, role in self.pod_roles.items()},
            }
        )
