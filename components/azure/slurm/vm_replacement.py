"""How a single VM with a NIC of its own (scheduler, login node, jump host) is replaced.

Azure refuses some changes to a VM in place: its image (PropertyChangeNotAllowed, which
pulumi-azure-native passes through instead of replacing:
github.com/pulumi/pulumi-azure-native/issues/1117, whose workaround is `replaceOnChanges`), its
admin user, SSH keys and computer name. Its size can change in place only when the running VM's
hardware cluster offers the new size, and never between a size with a local temp disk and one
without (MicrosoftDocs azure-docs `articles/virtual-machines/resize-vm.md`);
terraform-provider-azurerm deallocates the VM to resize it (`linux_virtual_machine_resource.go`,
update), while azure-native sends one PUT, which Azure refuses when the size needs that. So a size
change replaces the VM too: every size the region offers works, and what the scheduler must keep is
on its data disk, not its OS disk.

Pulumi's default replacement creates the new VM while the old one still holds the NIC (and the
scheduler's data disk), which Azure refuses; so the old VM is deleted first. Its NIC and data
disk are detached, not deleted, when Azure deletes it (`deleteOption`, MicrosoftDocs
`articles/virtual-machines/delete.md`), and the new VM takes them: the same private IP (a
dynamic one is released only when its NIC is deleted or moved: MicrosoftDocs
`articles/virtual-network/ip-services/private-ip-addresses.md`), public IP, hostname and, on the
scheduler, /home and /sched.

What else a replacement touches (pulumi/pulumi `pkg/resource/deploy/step_generator.go`): the
engine also replaces, first, the resources with an input taken from the VM that cannot change in
place: the Run Commands (named by the VM), so the config sync, team and resize-drain scripts run
again on the successor, and a login VM's Entra extension and role. Resources that only wait for
the VM (the scale sets' `dependsOn`) stay. The successor boots with the customData stored when the
VM was first created, not a new rendering: an ignored input keeps its old value in the new state
(`processIgnoreChanges`), and a replacement is created from that state.
"""

from __future__ import annotations

from typing import Any, Final

import pulumi

REPLACED_ON: Final = (
    "storageProfile.imageReference",
    "hardwareProfile.vmSize",
    "osProfile.adminUsername",
    "osProfile.computerName",
    "osProfile.linuxConfiguration.ssh.publicKeys",
)
"""Input paths Azure cannot update on a VM (or, the size, not always): a change replaces it."""


def replaced_vm_options(
    parent: pulumi.Resource, *, ignore_changes: list[str] | None = None
) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(
        parent=parent,
        delete_before_replace=True,
        replace_on_changes=list(REPLACED_ON),
        ignore_changes=ignore_changes,
    )


def kept_nic(nic_id: pulumi.Input[str]) -> dict[str, Any]:
    """The VM's one NIC, detached (not deleted) with the VM so its successor takes it."""
    return {"network_interfaces": [{"id": nic_id, "primary": True, "delete_option": "Detach"}]}
