"""The cluster's public addresses: static Standard SKU (Basic is being retired by Azure)."""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure


def static_public_ip(
    name: str,
    location: str,
    resource_group_name: pulumi.Input[str],
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> azure.network.PublicIPAddress:
    return azure.network.PublicIPAddress(
        name,
        resource_group_name=resource_group_name,
        location=location,
        sku={"name": "Standard"},
        public_ip_allocation_method="Static",
        tags=tags,
        opts=pulumi.ResourceOptions(parent=parent),
    )
