"""PowerRole: the scheduler's right to start, deallocate, reimage and redeploy its GPU nodes.

A custom role holding exactly the actions the power program (clusterctl/power/azure_backend.py)
calls, assigned to the scheduler's managed identity on each of the cluster's scale sets, and
nothing else: no read of other resources, no delete, no scale. A custom role's assignable scope
is the resource group (Azure takes management groups, subscriptions or resource groups there);
the assignments themselves are scoped to the scale sets. Action names: MicrosoftDocs azure-docs,
"Azure resource provider operations", Microsoft.Compute (tests/data/azure-rest/SOURCES.md).
The power program does not poll long-running operations (that needs
Microsoft.Compute/locations/operations/read, which no scale-set scope can hold): it reads each
VM's instance view instead.
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
    f"{VMSS}/virtualMachines/instanceView/read",
    f"{VMSS}/virtualMachines/read",
    f"{VMSS}/virtualMachines/reimage/action",
    f"{VMSS}/virtualMachines/redeploy/action",
    f"{VMSS}/delete/action",
)
"""Batched start/deallocate per scale set (with explicit instanceIds), the same per VM when a batch
is refused, the instance view to see allocation failures, reimage and redeploy for `clusterctl
node replace`, the list of a scale set's VMs for the name map (`gpucl-power names`), and
DeleteInstances for exactly the VMs of the nodes a shrink drained (`gpucl-power delete`)."""


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
        # A role definition's name is a GUID; derived from the stack and cluster so a re-run
        # of the program names the same role.
        role_guid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpu-clusters/{stack}/{cluster}/power"))
        self.role = azure.authorization.RoleDefinition(
            f"{name}-def",
            role_definition_id=role_guid,
            role_name=f"gpu-clusters power {cluster} ({stack})",
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
