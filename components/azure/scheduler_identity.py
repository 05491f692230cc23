"""SchedulerIdentity: the scheduler's managed identity, Reader on the cluster's resource group only.

Least privilege: CycleCloud's walkthrough gives its VM Contributor on the whole subscription; the
scheduler here only reads the scale sets' instances (to map Slurm nodes to VMs), so Reader on one
resource group is enough.
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

READER_ROLE_ID = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
"""Azure built-in role 'Reader' (docs: Azure built-in roles, General)."""


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
        client = azure.authorization.get_client_config_output()
        self.role_assignment = azure.authorization.RoleAssignment(
            f"{name}-reader",
            principal_id=self.identity.principal_id,
            principal_type="ServicePrincipal",
            role_definition_id=client.subscription_id.apply(
                lambda sub: (
                    f"/subscriptions/{sub}/providers/Microsoft.Authorization"
                    f"/roleDefinitions/{READER_ROLE_ID}"
                )
            ),
            scope=resource_group.id,
            opts=child,
        )
        self.register_outputs({"identityId": self.identity.id})
