"""EfaSecurityGroup: all protocols in from and out to itself, which EFA's SRD traffic needs
(eksctl addEFASecurityGroup, terraform-aws-eks all_self_efa); nothing else is opened."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws


class EfaSecurityGroup(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        vpc_id: pulumi.Input[str],
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:aws:EfaSecurityGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            vpc_id=vpc_id,
            description="EFA: all traffic between the GPU nodes that carry this group",
            tags={**tags, "Name": name},
            opts=child,
        )
        self.ingress = aws.vpc.SecurityGroupIngressRule(
            f"{name}-self-in",
            security_group_id=self.group.id,
            referenced_security_group_id=self.group.id,
            ip_protocol="-1",
            description="all protocols from members of this group",
            tags=tags,
            opts=child,
        )
        self.egress = aws.vpc.SecurityGroupEgressRule(
            f"{name}-self-out",
            security_group_id=self.group.id,
            referenced_security_group_id=self.group.id,
            ip_protocol="-1",
            description="all protocols to members of this group",
            tags=tags,
            opts=child,
        )
        self.register_outputs({"securityGroupId": self.group.id})
