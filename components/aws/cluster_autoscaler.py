"""EksAutoscalerIdentity: the AWS role of the cluster autoscaler, given to its service account
alone through EKS Pod Identity (IMDS is out of pods' reach, and the node role cannot scale).

It may read Auto Scaling groups, launch templates and node groups anywhere (what the autoscaler's
AWS README lists for auto-discovery and scaling from zero), and change the size of, or terminate
instances in, only the groups EKS tagged as this cluster's own.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from clusterctl.spec.kubernetes import (
    CLUSTER_AUTOSCALER_NAMESPACE,
    CLUSTER_AUTOSCALER_SERVICE_ACCOUNT,
)
from components.aws.iam import POD_IDENTITY_SERVICE, trust_policy

READ_ACTIONS = (
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeScalingActivities",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:GetInstanceTypesFromInstanceRequirements",
    "eks:DescribeNodegroup",
)
SCALE_ACTIONS = (
    "autoscaling:SetDesiredCapacity",
    "autoscaling:TerminateInstanceInAutoScalingGroup",
)


def autoscaler_policy(cluster_name: str) -> str:
    # EKS tags each managed node group's Auto Scaling group k8s.io/cluster-autoscaler/<cluster>
    # = owned: scaling is limited to those.
    owned = {"StringEquals": {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster_name}": "owned"}}
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Action": list(READ_ACTIONS), "Resource": "*"},
                {
                    "Effect": "Allow",
                    "Action": list(SCALE_ACTIONS),
                    "Resource": "*",
                    "Condition": owned,
                },
            ],
        }
    )


class EksAutoscalerIdentity(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        cluster_name: pulumi.Output[str],
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:aws:AutoscalerIdentity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=trust_policy(POD_IDENTITY_SERVICE),
            description=(
                f"EKS Pod Identity role of {CLUSTER_AUTOSCALER_NAMESPACE}/"
                f"{CLUSTER_AUTOSCALER_SERVICE_ACCOUNT} (cluster autoscaler)"
            ),
            tags=tags,
            opts=child,
        )
        self.policy = aws.iam.RolePolicy(
            f"{name}-scale",
            role=self.role.id,
            policy=cluster_name.apply(autoscaler_policy),
            opts=child,
        )
        self.association = aws.eks.PodIdentityAssociation(
            f"{name}-pod-identity",
            cluster_name=cluster_name,
            namespace=CLUSTER_AUTOSCALER_NAMESPACE,
            service_account=CLUSTER_AUTOSCALER_SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.policy]),
        )
        self.register_outputs({"roleArn": self.role.arn})
