"""PowerRole: the scheduler's right to start, deallocate, reimage and redeploy its GPU nodes.

A custom role holding exactly the actions the power program (clusterctl/power/azure_backend.py)
calls, assigned to the scheduler's managed identity on each of the cluster's scale sets, and
nothing else: no read of other resources, no delete, no scale. A custom role's assignable scope
is the resource group (Azure takes management groups, subscriptions or resource groups there);
the assignments themselves are scoped to the scale sets. Action names: MicrosoftDocs azure-docs,
"Azure resource provider operations", Microsoft.Compute (tests/data/azure-rest/SOURCES.md).
The power program does not poll long-running operations (that needs
Microsoft.Compute/locations/operations/read, which no scale-set scope can hold): it lists each
scale set's VMs with their instance views instead (GET .../virtualMachines?$expand=instanceView:
ARM authorises a request by its path and method, so virtualMachines/read covers it).
"""

from __future__ import annotations

import uuid

import pulumi
import pulumi_azure_native as azure

VMSS = "Microsoft.Compute/virtualMachineScaleSets"
POWER_ROLE_ACTIONS = (
    f"{VMSS}/start/action",
    f"{VMSS}/deallocate/action",
    f"{VMSS}/virtualMachines/start/action",
    f"{VMSS}/virtualMachines/deallocate/action",
    f"{VMSS}/virtualMachines/read",
    f"{VMSS}/virtualMachines/reimage/action",
    f"{VMSS}/virtualMachines/redeploy/action",
    f"{VMSS}/delete/action",
)
"""Batched start/deallocate per scale set (with explicit instanceIds), the same per VM when a batch
is refused, the list of a scale set's VMs with their instance views to see allocation failures
(and, without them, for the name map: `gpucl-power names`), reimage and redeploy for `clusterctl
node replace`, and DeleteInstances for exactly the VMs of the nodes a shrink drained
(`gpucl-power delete`)."""


def power_role_guid(resource_group_id: str, stack: str, cluster: str) -> str:
    scope = resource_group_id.lower()  # ARM ids are case-insensitive
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpu-clusters{scope}/{stack}/{cluster}/power"))


def power_role_name(cluster: str, stack: str, guid: str) -> str:
    return f"gpu-clusters power {cluster} ({stack}) {guid}"


class PowerRole(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        *,
        cluster: str,
        stack: str,
        principal_id: pulumi.Input[str],
        resource_group: azure.resources.ResourceGroup,
        scale_sets: list[tuple[str, azure.compute.VirtualMachineScaleSet]],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:PowerRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        # A role definition's id is a GUID, and a custom role's name must be unique in the whole
        # Entra tenant: both derive from the resource group's id (subscription and group), so a
        # re-run names the same role while the same stack deployed to another group or
        # subscription of the tenant makes its own instead of colliding with the first.
        role_guid = resource_group.id.apply(lambda rg_id: power_role_guid(rg_id, stack, cluster))
        self.role = azure.authorization.RoleDefinition(
            f"{name}-def",
            role_definition_id=role_guid,
            role_name=role_guid.apply(lambda guid: power_role_name(cluster, stack, guid)),
            description=(
                f"Start, deallocate, reimage and redeploy the GPU nodes of cluster {cluster}: "
                "Slurm's power program on the scheduler."
            ),
            role_type="CustomRole",
            scope=resource_group.id,
            assignable_scopes=[resource_group.id],
            permissions=[{"actions": list(POWER_ROLE_ACTIONS), "not_actions": []}],
            opts=child,
        )
        self.assignments = [
            azure.authorization.RoleAssignment(
                f"{name}-{group}",
                principal_id=principal_id,
                principal_type="ServicePrincipal",
                role_definition_id=self.role.id,
                scope=vmss.id,
                opts=child,
            )
            for group, vmss in scale_sets
        ]
        self.register_outputs({"roleDefinitionId": self.role.id})
