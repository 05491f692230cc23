"""EksGpuNodeGroup: one partition as an EKS managed node group in one subnet, with its EFA
launch template and (unless it runs in a capacity block) a `cluster` placement group. The cluster
autoscaler sizes it between minNodes and nodes; tags on its Auto Scaling group describe a node
for when there is none to look at."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from clusterctl.spec.catalog import Catalog, Sku
from clusterctl.spec.kubernetes import (
    GPU_TAINT,
    autoscaled_min,
    autoscaler_node_template,
    eks_node_template_tags,
    node_labels,
)
from clusterctl.spec.model import PartitionSpec
from components.aws.efa_launch_template import gpu_launch_template

GPU_AMI_TYPE = "AL2023_x86_64_NVIDIA"
"""EKS-optimized AL2023 with the NVIDIA driver, container toolkit and EFA packages."""


def capacity_type(part: PartitionSpec) -> str:
    if part.capacity_block:
        return "CAPACITY_BLOCK"
    return "SPOT" if part.spot else "ON_DEMAND"


def reserved(part: PartitionSpec) -> bool:
    """The node group runs in a capacity reservation (ODCR) or a capacity block."""
    return bool(part.capacity_block or part.capacity_reservation_id)


def _asg_name(resources: list | None) -> str | None:
    """The Auto Scaling group EKS made for the node group."""
    groups = resources[0].autoscaling_groups if resources else None
    return groups[0].name if groups else None


def _template_version(latest: int | None) -> str:
    # Pin the node group to the template version just written, so a change rolls the nodes.
    return "$Latest" if latest is None else str(latest)


class EksGpuNodeGroup(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        part: PartitionSpec,
        sku: Sku,
        cat: Catalog,
        *,
        kubernetes_version: str,
        release_version: pulumi.Input[str],
        cluster_name: pulumi.Input[str],
        node_role_arn: pulumi.Input[str],
        subnet: aws.ec2.Subnet,
        security_group_ids: list[pulumi.Input[str]],
        placement_group_name: str,
        labels: dict[str, str],
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:aws:GpuNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        efa_count = sku.fabric.nics if sku.fabric.kind == "efa" and part.fabric != "none" else 0
        # Reserved capacity is placed where it was reserved: EC2 refuses a placement group with a
        # capacity block, and an ODCR only serves instances launched into the placement group it
        # was created in, so a new group would leave the reservation unused (docs/decisions/0004).
        self.placement_group = (
            None
            if reserved(part)
            else aws.ec2.PlacementGroup(
                f"{name}-pg",
                name=placement_group_name,
                strategy="cluster",
                tags=tags,
                opts=child,
            )
        )
        self.launch_template = gpu_launch_template(
            f"{name}-lt",
            part,
            efa_count,
            security_group_ids,
            self.placement_group,
            tags,
            child,
        )
        self.node_group = aws.eks.NodeGroup(
            f"{name}-ng",
            cluster_name=cluster_name,
            # the cluster's version and its newest AMI release (SSM, read at `up`): a version
            # bump rolls the nodes onto it, and scale-from-zero boots the current AMI
            version=kubernetes_version,
            release_version=release_version,
            node_role_arn=node_role_arn,
            subnet_ids=[subnet.id],
            ami_type=GPU_AMI_TYPE,
            capacity_type=capacity_type(part),
            # desiredSize is the autoscaler's from here on: `up` leaves it as it finds it.
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=autoscaled_min(part),
                min_size=autoscaled_min(part),
                max_size=part.nodes,
            ),
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=self.launch_template.id,
                version=self.launch_template.latest_version.apply(_template_version),
            ),
            labels={**labels, **node_labels(part)},
            taints=[
                aws.eks.NodeGroupTaintArgs(
                    key=GPU_TAINT["key"], value=GPU_TAINT["value"], effect="NO_SCHEDULE"
                )
            ],
            # Replace GPU nodes one at a time: a multi-node job loses at most one node per step.
            # In reserved capacity there is no room for the surge node EKS's DEFAULT strategy
            # launches first, so every update would stall: MINIMAL replaces in place.
            update_config=aws.eks.NodeGroupUpdateConfigArgs(
                max_unavailable=1, update_strategy="MINIMAL" if reserved(part) else None
            ),
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["scalingConfig.desiredSize"]),
        )
        asg = self.node_group.resources.apply(_asg_name)
        self.autoscaler_tags = [
            aws.autoscaling.Tag(
                f"{name}-ca-{i}",
                autoscaling_group_name=asg,
                tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                opts=child,
            )
            for i, (key, value) in enumerate(
                eks_node_template_tags(autoscaler_node_template(part, cat, labels)).items()
            )
        ]
        self.register_outputs(
            {
                "nodeGroupName": self.node_group.node_group_name,
                "subnetId": subnet.id,
                "efaInterfaces": efa_count,
                "placementGroup": self.placement_group.name if self.placement_group else None,
            }
        )
