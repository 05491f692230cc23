"""SchedulerIdentity: the scheduler's managed identity.

Least privilege: CycleCloud's walkthrough gives its VM Contributor on the whole subscription; this
identity gets only the power program's custom role on the cluster's own scale sets (PowerRole,
assigned once they exist), never a built-in role.
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure


class SchedulerIdentity(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        *,
        resource_group: azure.resources.ResourceGroup,
        location: str,
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:SchedulerIdentity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.identity = azure.managedidentity.UserAssignedIdentity(
            f"{name}-id",
            resource_group_name=resource_group.name,
            location=location,
            tags=tags,
            opts=child,
        )
        self.register_outputs({"identityId": self.identity.id})
