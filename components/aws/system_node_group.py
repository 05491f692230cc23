"""EksSystemNodeGroup: small CPU nodes for CoreDNS, the operators and the NCCL launcher pod."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.aws.efa_launch_template import metadata_options, root_volume, tag_specifications

SYSTEM_AMI_TYPE = "AL2023_x86_64_STANDARD"


class EksSystemNodeGroup(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        *,
        kubernetes_version: str,
        release_version: pulumi.Input[str],
        instance_type: str,
        nodes: int,
        cluster_name: pulumi.Input[str],
        node_role_arn: pulumi.Input[str],
        subnet_ids: list[pulumi.Input[str]],
        labels: dict[str, str],
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:aws:SystemNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.launch_template = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            description="system nodes: IMDSv2 only",
            metadata_options=metadata_options(),
            block_device_mappings=[root_volume(100)],
            tag_specifications=tag_specifications(tags),
            update_default_version=True,
            tags=tags,
            opts=child,
        )
        self.node_group = aws.eks.NodeGroup(
            f"{name}-ng",
            cluster_name=cluster_name,
            # the cluster's version and its newest AMI release (SSM, read at `up`): a version
            # bump rolls the nodes onto it, and scale-from-zero boots the current AMI
            version=kubernetes_version,
            release_version=release_version,
            node_role_arn=node_role_arn,
            subnet_ids=subnet_ids,
            ami_type=SYSTEM_AMI_TYPE,
            instance_types=[instance_type],
            capacity_type="ON_DEMAND",
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=nodes, min_size=nodes, max_size=nodes + 2
            ),
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=self.launch_template.id,
                version=self.launch_template.latest_version.apply(
                    lambda v: "$Latest" if v is None else str(v)
                ),
            ),
            labels={**labels, "gpu-clusters/role": "system"},
            tags=tags,
            opts=child,
        )
        self.register_outputs({"nodeGroupName": self.node_group.node_group_name})
