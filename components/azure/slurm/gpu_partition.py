"""GpuPartition: one Slurm partition as scale sets of at most 100 VMs, each one InfiniBand fabric.

A scale set with singlePlacementGroup=true keeps its VMs on one IB fabric and holds at most 100;
a bigger partition becomes several sets named <partition>-pg0, -pg1, ... like CycleCloud's.
No resource here grows with the node count: capacity carries it.

What an edit does to a deployed scale set (MicrosoftDocs azure-docs
`articles/virtual-machine-scale-sets/virtual-machine-scale-sets-upgrade-scale-set.md`, "Properties
with restrictions on modification"; terraform-provider-azurerm
`internal/services/compute/linux_virtual_machine_scale_set_resource.go`, its ForceNew fields):
- In place: the image version or a gallery image id (the model's imageReference), the capacity,
  the customData, tags. Under the Manual upgrade policy nothing happens to existing VMs: they keep
  their OS disk, and a reimage restores the version that disk has (REST
  VirtualMachineScaleSets_Reimage, `exactVersion`); only VMs created from now on, or one brought to
  the latest model (`az vmss update-instances`), boot the new one.
- Replaced (REPLACED_ON): what Azure cannot update (availability zones, create-time there and
  refused by the spec on Azure Slurm today; the image's publisher and offer, the OS disk's storage
  type, priority and eviction policy, fault domain count, orchestration mode, admin user,
  computer name prefix), the image's sku (an Ubuntu release: one partition does not mix two)
  and the VM size: a size change needs every VM deallocated when the set's hardware cluster lacks
  the new size, as between two GPU sizes (each on InfiniBand clusters of its own), and
  azure-native sends one PUT; running VMs would also keep the old size under a slurm.conf that
  describes the new one.
A replaced set is deleted first: its name is fixed (the power program and the name map use it),
so a successor cannot be created beside it, and a region's GPU quota rarely holds two copies of a
partition.
"""

from __future__ import annotations

from typing import Any, Final

import pulumi
import pulumi_azure_native as azure

from clusterctl.spec.topology import ScaleSet
from components.azure.slurm.cluster_secrets import ClusterSecrets
from components.azure.slurm.network import AzureNetwork
from components.azure.slurm.os_profile import linux_os_profile
from components.azure.slurm.props import PartitionProps

_PROFILE = "virtualMachineProfile"
REPLACED_ON: Final = (
    "sku.name",
    "zones",
    "platformFaultDomainCount",
    "orchestrationMode",
    f"{_PROFILE}.priority",
    f"{_PROFILE}.evictionPolicy",
    f"{_PROFILE}.osProfile.adminUsername",
    f"{_PROFILE}.osProfile.computerNamePrefix",
    f"{_PROFILE}.storageProfile.imageReference.publisher",
    f"{_PROFILE}.storageProfile.imageReference.offer",
    f"{_PROFILE}.storageProfile.imageReference.sku",
    f"{_PROFILE}.storageProfile.osDisk.managedDisk.storageAccountType",
)
"""Input paths whose change replaces a scale set (the module docstring says why); the capacity
(`sku.capacity`), the image version and the customData change in place."""


class GpuPartition(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        props: PartitionProps,
        *,
        network: AzureNetwork,
        secrets: ClusterSecrets,
        files_account: pulumi.Input[str] | None = None,
        lustre_mgs: pulumi.Input[str] | None = None,
        hooks: pulumi.ResourceHookBinding | None = None,
        after: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`hooks` bind to the partition's last scale set (the post-deploy validation);
        `files_account` names /home's Azure Files share, if it has one, `lustre_mgs` the address of
        storage.lustre's file system; every scale set waits
        for `after` (the resize drain: a capacity decrease deletes VMs)."""
        super().__init__("gpu-clusters:azure:GpuPartition", name, None, opts)
        custom_data = pulumi.Output.all(secrets.munge_key_b64, files_account, lustre_mgs).apply(
            lambda v: props.vm.user_data(munge_key_b64=v[0], files_account=v[1], lustre_mgs=v[2])
        )
        self.scale_sets: list[tuple[ScaleSet, azure.compute.VirtualMachineScaleSet]] = []
        sets = props.scale_sets
        for scale_set in sets:
            vmss = azure.compute.VirtualMachineScaleSet(
                f"{name}-{scale_set.name}",
                vm_scale_set_name=scale_set.vm_set_name(props.cluster),
                resource_group_name=network.resource_group.name,
                location=props.vm.region,
                sku={"name": props.vm.vm_size, "tier": "Standard", "capacity": scale_set.size},
                orchestration_mode="Uniform",
                single_placement_group=True,
                platform_fault_domain_count=1,
                overprovision=False,
                upgrade_policy={"mode": "Manual"},
                virtual_machine_profile=vm_profile(props, scale_set, network, secrets, custom_data),
                tags=dict(props.vm.tags),
                opts=pulumi.ResourceOptions(
                    parent=self,
                    hooks=hooks if scale_set is sets[-1] else None,
                    depends_on=after,
                    delete_before_replace=True,
                    replace_on_changes=list(REPLACED_ON),
                ),
            )
            self.scale_sets.append((scale_set, vmss))
        self.register_outputs({"scaleSets": [v.name for _, v in self.scale_sets]})


def vm_profile(
    props: PartitionProps,
    scale_set: ScaleSet,
    network: AzureNetwork,
    secrets: ClusterSecrets,
    custom_data: pulumi.Output[str],
) -> dict[str, Any]:
    """One scale set's VM profile: spot or regular, the OS profile with the node's user-data, the
    HPC image, and the NIC in the compute subnet with accelerated networking."""
    spot = (
        {
            "priority": "Spot",
            # Deallocate: an evicted VM keeps its disks and instance id, so its node name;
            # the power program starts it again when Slurm next needs it.
            "eviction_policy": "Deallocate",
            "billing_profile": {"max_price": -1},
        }
        if props.spot
        else {"priority": "Regular"}
    )
    return {
        **spot,
        "os_profile": linux_os_profile(
            props.vm.admin_user,
            secrets.public_key,
            computer_name_prefix=scale_set.computer_name_prefix,
            custom_data=custom_data,
        ),
        "storage_profile": {
            "image_reference": dict(props.vm.image),
            "os_disk": {
                "create_option": "FromImage",
                "caching": "ReadWrite",
                "disk_size_gb": 256,
                "managed_disk": {"storage_account_type": "Premium_LRS"},
            },
        },
        "network_profile": {
            "network_interface_configurations": [
                {
                    "name": "eth0",
                    "primary": True,
                    "enable_accelerated_networking": True,
                    "ip_configurations": [
                        {
                            "name": "internal",
                            "subnet": {"id": network.compute_subnet.id},
                        }
                    ],
                }
            ]
        },
    }
