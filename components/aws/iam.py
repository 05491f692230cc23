"""EksIamRoles: the cluster and node roles, each with only the AWS managed policies EKS needs.

Cluster: AmazonEKSClusterPolicy. Nodes: AmazonEKSWorkerNodePolicy, AmazonEKS_CNI_Policy (the VPC
CNI on the node's role) and AmazonEC2ContainerRegistryPullOnly (pull, not the wider ReadOnly).
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.tags import cloud_tags

CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryPullOnly",
)


def trust_policy(service: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": service},
                    "Action": "sts:AssumeRole",
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
        self.attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-{kind}-{policy}",
                role=role.name,
                policy_arn=f"arn:{partition}:iam::aws:policy/{policy}",
                opts=child,
            )
            for kind, role, policies in (
                ("cluster", self.cluster_role, CLUSTER_POLICIES),
                ("node", self.node_role, NODE_POLICIES),
            )
            for policy in policies
        ]
        self.register_outputs(
            {"clusterRoleArn": self.cluster_role.arn, "nodeRoleArn": self.node_role.arn}
        )
