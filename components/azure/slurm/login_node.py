"""LoginNode: where the team logs in and submits (`loginNodes`). In the scheduler's subnet, with a
static public IP when ssh.access is `direct` (behind the jump host otherwise); no managed
identity, so no process here can get a token that changes a VM. Its user-data mounts /home and
/sched from the scheduler and runs Slurm's commands configless."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_azure_native as azure

from components.azure.slurm.cluster_secrets import ClusterSecrets
from components.azure.slurm.network import AzureNetwork
from components.azure.slurm.os_profile import linux_os_profile
from components.azure.slurm.props import LoginProps
from components.azure.slurm.public_ip import static_public_ip
from components.azure.slurm.vm_replacement import kept_nic, replaced_vm_options

VM_USER_LOGIN_ROLE = "fb879df8-f326-4884-b1cf-06f3ad86be52"
"""Azure's built-in role "Virtual Machine User Login" (Azure built-in roles, Compute)."""


class LoginNode(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        props: LoginProps,
        *,
        network: AzureNetwork,
        secrets: ClusterSecrets,
        files_account: pulumi.Input[str] | None = None,
        lustre_mgs: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`files_account`: the storage account of /home's Azure Files share, if it has one;
        `lustre_mgs`: the MGS address of storage.lustre's file system, if the stack has one."""
        super().__init__("gpu-clusters:azure:LoginNode", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(props.vm.tags)
        rg = network.resource_group.name
        self.public_ip = None
        ip_config: dict[str, Any] = {
            "name": "primary",
            "subnet": {"id": network.scheduler_subnet.id},
            "private_ip_allocation_method": "Dynamic",
        }
        if props.public_ip:
            self.public_ip = static_public_ip(f"{name}-pip", props.vm.region, rg, tags, self)
            ip_config["public_ip_address"] = {"id": self.public_ip.id}
        self.nic = azure.network.NetworkInterface(
            f"{name}-nic",
            resource_group_name=rg,
            location=props.vm.region,
            ip_configurations=[ip_config],
            tags=tags,
            opts=child,
        )
        custom_data = pulumi.Output.all(secrets.munge_key_b64, files_account, lustre_mgs).apply(
            lambda v: props.vm.user_data(munge_key_b64=v[0], files_account=v[1], lustre_mgs=v[2])
        )
        entra = props.entra_group
        self.vm = azure.compute.VirtualMachine(
            f"{name}-vm",
            resource_group_name=rg,
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
            },
            network_profile=kept_nic(self.nic.id),
            security_profile={"security_type": "TrustedLaunch"},
            # Entra login's extension needs a system identity; it is granted no role, so its
            # token can change nothing (the power identity lives on the scheduler alone)
            identity={"type": "SystemAssigned"} if entra else None,
            tags=tags,
            # the team reaches it by the Run Command and /sched, never by a new customData
            opts=replaced_vm_options(self, ignore_changes=["osProfile.customData"]),
        )
        if entra:
            self._entra_login(name, props.vm.region, rg, tags, entra, network)
        self.private_ip = self.nic.ip_configurations.apply(
            lambda cfgs: (
                (cfgs or [{}])[0].get("private_ip_address")
                if isinstance((cfgs or [{}])[0], dict)
                else cfgs[0].private_ip_address
            )
        )
        self.address = self.public_ip.ip_address if self.public_ip is not None else self.private_ip
        self.register_outputs({"address": self.address})

    def _entra_login(
        self,
        name: str,
        region: str,
        rg: pulumi.Output[str],
        tags: dict[str, str],
        group: str,
        network: AzureNetwork,
    ) -> None:
        """Members of `group` log in with their Entra accounts: the extension on the VM, the
        built-in role Virtual Machine User Login (no sudo; Administrator Login is not given)
        for the group on this VM alone."""
        child = pulumi.ResourceOptions(parent=self, depends_on=[self.vm])
        self.entra_extension = azure.compute.VirtualMachineExtension(
            f"{name}-entra-login",
            resource_group_name=rg,
            vm_name=self.vm.name,
            vm_extension_name="AADSSHLoginForLinux",
            location=region,
            publisher="Microsoft.Azure.ActiveDirectory",
            type="AADSSHLoginForLinux",
            type_handler_version="1.0",
            auto_upgrade_minor_version=True,
            tags=tags,
            opts=child,
        )
        role = network.resource_group.id.apply(
            lambda rg_id: (
                "/".join(rg_id.split("/")[:3])
                + f"/providers/Microsoft.Authorization/roleDefinitions/{VM_USER_LOGIN_ROLE}"
            )
        )
        self.entra_role = azure.authorization.RoleAssignment(
            f"{name}-entra-user-login",
            principal_id=group,
            principal_type="Group",
            role_definition_id=role,
            scope=self.vm.id,
            opts=child,
        )
