"""SchedulerNode: the CycleCloud-like head VM running slurmctld, munge and the NFS export.

Its data disk holds /home and /sched; it is protected (kept by `pulumi destroy`) unless the stack
sets storage.keepOnDestroy: false. A new image pin or size replaces the VM alone: deleted first,
its successor takes the same NIC and data disk (components/azure/slurm/vm_replacement.py).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_azure_native as azure

from components.azure.slurm.cluster_secrets import ClusterSecrets
from components.azure.slurm.network import AzureNetwork
from components.azure.slurm.os_profile import linux_os_profile
from components.azure.slurm.props import SchedulerProps
from components.azure.slurm.public_ip import static_public_ip
from components.azure.slurm.scheduler_identity import SchedulerIdentity
from components.azure.slurm.vm_replacement import kept_nic, replaced_vm_options


class SchedulerNode(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        props: SchedulerProps,
        *,
        network: AzureNetwork,
        secrets: ClusterSecrets,
        files_account: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`files_account`: the storage account of /home's Azure Files share, if it has one."""
        super().__init__("gpu-clusters:azure:SchedulerNode", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(props.vm.tags)
        rg = network.resource_group
        self.identity = SchedulerIdentity(
            f"{name}-identity",
            resource_group=rg,
            location=props.vm.region,
            tags=tags,
            opts=child,
        )
        self._nic(name, props, network, rg, tags, child)
        self._data_disk(name, props, rg)
        self._vm(name, props, secrets, files_account, rg, tags)
        self.private_ip = self.nic.ip_configurations.apply(
            lambda cfgs: (
                (cfgs or [{}])[0].get("private_ip_address")
                if isinstance((cfgs or [{}])[0], dict)
                else cfgs[0].private_ip_address
            )
        )
        self.register_outputs({"vmId": self.vm.id})

    def _nic(
        self,
        name: str,
        props: SchedulerProps,
        network: AzureNetwork,
        rg: azure.resources.ResourceGroup,
        tags: dict[str, str],
        child: pulumi.ResourceOptions,
    ) -> None:
        """The NIC in the scheduler subnet; a static public IP with access: direct."""
        self.public_ip = None
        if props.public_ip:
            self.public_ip = static_public_ip(f"{name}-pip", props.vm.region, rg.name, tags, self)
        ip_config: dict[str, Any] = {
            "name": "primary",
            "subnet": {"id": network.scheduler_subnet.id},
            "private_ip_allocation_method": "Dynamic",
        }
        if self.public_ip is not None:
            ip_config["public_ip_address"] = {"id": self.public_ip.id}
        self.nic = azure.network.NetworkInterface(
            f"{name}-nic",
            resource_group_name=rg.name,
            location=props.vm.region,
            ip_configurations=[ip_config],
            tags=tags,
            opts=child,
        )

    def _data_disk(
        self, name: str, props: SchedulerProps, rg: azure.resources.ResourceGroup
    ) -> None:
        """/home (unless an Azure Files share holds it) and /sched: protected unless
        storage.keepOnDestroy is false."""
        self.data_disk = azure.compute.Disk(
            f"{name}-shared-disk",
            resource_group_name=rg.name,
            location=props.vm.region,
            disk_size_gb=props.data_disk_gib,
            sku={"name": "Premium_LRS"},
            creation_data={"create_option": "Empty"},
            tags=dict(props.storage_tags),
            opts=pulumi.ResourceOptions(parent=self, protect=props.keep_data_disk),
        )

    def _vm(
        self,
        name: str,
        props: SchedulerProps,
        secrets: ClusterSecrets,
        files_account: pulumi.Input[str] | None,
        rg: azure.resources.ResourceGroup,
        tags: dict[str, str],
    ) -> None:
        custom_data = pulumi.Output.all(
            secrets.scheduler_inputs(), files_account, self.identity.identity.client_id
        ).apply(lambda v: props.vm.user_data(**v[0], files_account=v[1], identity_client_id=v[2]))
        self.vm = azure.compute.VirtualMachine(
            f"{name}-vm",
            resource_group_name=rg.name,
            location=props.vm.region,
            hardware_profile={"vm_size": props.vm.vm_size},
            os_profile=linux_os_profile(
                props.vm.admin_user,
                secrets.public_key,
                computer_name=props.computer_name,
                custom_data=custom_data,
            ),
            storage_profile={
                "image_reference": dict(props.vm.image),
                "os_disk": {
                    "create_option": "FromImage",
                    "caching": "ReadWrite",
                    "managed_disk": {"storage_account_type": "Premium_LRS"},
                    "delete_option": "Delete",
                },
                "data_disks": [
                    {
                        "lun": 0,
                        "create_option": "Attach",
                        "managed_disk": {"id": self.data_disk.id},
                        # Detach, never delete: the disk's own protection decides its fate.
                        "delete_option": "Detach",
                    }
                ],
            },
            network_profile=kept_nic(self.nic.id),
            identity={
                "type": "UserAssigned",
                "user_assigned_identities": [self.identity.identity.id],
            },
            security_profile={"security_type": "TrustedLaunch"},
            tags=tags,
            # Later Slurm files reach the scheduler through SlurmConfigSync (a run command);
            # a changed customData must not replace the VM that runs slurmctld.
            opts=replaced_vm_options(self, ignore_changes=["osProfile.customData"]),
        )
