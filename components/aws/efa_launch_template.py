"""The launch template of an EKS GPU node group: EFA interfaces, IMDSv2, placement, capacity.

EKS managed node groups take the subnet from the node group, so the interfaces name no subnet;
they carry the security groups instead (with interfaces in the template, EKS adds none itself).
"""

from __future__ import annotations

import base64

import pulumi
import pulumi_aws as aws

from clusterctl.render.kubernetes import eks_gpu_node_user_data
from clusterctl.spec.efa import efa_interfaces
from clusterctl.spec.model import PartitionSpec

IMDS_HOP_LIMIT = 1
"""1: IMDSv2 answers the node itself and host-network pods (kubelet, aws-node, the Pod Identity
agent), not ordinary pods one hop further behind the CNI, so they cannot take the node role's
credentials (EKS best practices, "Restrict access to the instance profile"). Pods get AWS access
through EKS Pod Identity instead (components/aws/iam.py POD_ROLES)."""
ROOT_VOLUME_GIB = 512
"""Container images for CUDA/NCCL run to tens of GiB; the AL2023 default of 20 GiB fills up."""


def network_interfaces(
    efa_count: int, security_group_ids: list[pulumi.Input[str]]
) -> list[aws.ec2.LaunchTemplateNetworkInterfaceArgs]:
    """No public IPs: multi-card instances cannot take one, and GPU nodes sit in private subnets."""
    layout_args: list[dict[str, int | str | None]]
    if efa_count == 0:
        layout_args = [{"network_card_index": 0, "device_index": 0, "interface_type": None}]
    else:
        layout_args = [
            {
                "network_card_index": i.network_card_index,
                "device_index": i.device_index,
                "interface_type": i.interface_type,
            }
            for i in efa_interfaces(efa_count)
        ]
    return [
        aws.ec2.LaunchTemplateNetworkInterfaceArgs(
            **args,
            security_groups=security_group_ids,
            associate_public_ip_address="false",
            delete_on_termination="true",
        )
        for args in layout_args
    ]


def metadata_options() -> aws.ec2.LaunchTemplateMetadataOptionsArgs:
    return aws.ec2.LaunchTemplateMetadataOptionsArgs(
        http_endpoint="enabled",
        http_tokens="required",
        http_put_response_hop_limit=IMDS_HOP_LIMIT,
    )


def gpu_launch_template(
    name: str,
    part: PartitionSpec,
    efa_count: int,
    security_group_ids: list[pulumi.Input[str]],
    placement_group: aws.ec2.PlacementGroup | None,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.ec2.LaunchTemplate:
    reservation = (
        aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=part.capacity_reservation_id
            )
        )
        if part.capacity_reservation_id
        else None
    )
    return aws.ec2.LaunchTemplate(
        name,
        description=f"GPU node group {part.name}: {part.sku}, {efa_count} EFA interfaces",
        instance_type=part.sku,
        network_interfaces=network_interfaces(efa_count, security_group_ids),
        metadata_options=metadata_options(),
        placement=(
            aws.ec2.LaunchTemplatePlacementArgs(group_name=placement_group.name)
            if placement_group is not None
            else None
        ),
        instance_market_options=(
            aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block")
            if part.capacity_block
            else None
        ),
        capacity_reservation_specification=reservation,
        block_device_mappings=[root_volume()],
        # containerd and kubelet on the instance NVMe (RAID0), not the EBS root: fast image pulls
        user_data=base64.b64encode(eks_gpu_node_user_data(efa_count > 0).encode()).decode(),
        tag_specifications=tag_specifications(tags),
        update_default_version=True,
        tags=tags,
        opts=opts,
    )


def root_volume(size_gib: int = ROOT_VOLUME_GIB) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name="/dev/xvda",
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=size_gib, volume_type="gp3", encrypted="true", delete_on_termination="true"
        ),
    )


def tag_specifications(tags: dict[str, str]) -> list[aws.ec2.LaunchTemplateTagSpecificationArgs]:
    """The instances, their volumes and interfaces carry the stack tags too."""
    return [
        aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
        for kind in ("instance", "volume", "network-interface")
    ]
