"""JumpHost: a small VM with the cluster's only public IP when ssh.access is `jumphost`.

The scheduler then has no public address; `ssh -J user@<jump> user@<scheduler>` reaches it.
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from components.azure.slurm.cluster_secrets import ClusterSecrets
from components.azure.slurm.network import AzureNetwork
from components.azure.slurm.os_profile import linux_os_profile
from components.azure.slurm.props import JumpHostProps
from components.azure.slurm.public_ip import static_public_ip
from components.azure.slurm.vm_replacement import kept_nic, replaced_vm_options


class JumpHost(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        props: JumpHostProps,
        *,
        network: AzureNetwork,
        secrets: ClusterSecrets,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:JumpHost", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(props.tags)
        rg = network.resource_group.name
        self.public_ip = static_public_ip(f"{name}-pip", props.region, rg, tags, self)
        nic = azure.network.NetworkInterface(
            f"{name}-nic",
            resource_group_name=rg,
            location=props.region,
            ip_configurations=[
                {
                    "name": "primary",
                    "subnet": {"id": network.scheduler_subnet.id},
                    "private_ip_allocation_method": "Dynamic",
                    "public_ip_address": {"id": self.public_ip.id},
                }
            ],
            tags=tags,
            opts=child,
        )
        self.vm = azure.compute.VirtualMachine(
            f"{name}-vm",
            resource_group_name=rg,
            location=props.region,
            hardware_profile={"vm_size": props.vm_size},
            os_profile=linux_os_profile(
                props.admin_user, secrets.public_key, computer_name=props.computer_name
            ),
            storage_profile={
                "image_reference": dict(props.image),
                "os_disk": {"create_option": "FromImage", "delete_option": "Delete"},
            },
            network_profile=kept_nic(nic.id),
            security_profile={"security_type": "TrustedLaunch"},
            tags=tags,
            opts=replaced_vm_options(self),
        )
        self.register_outputs({"publicIp": self.public_ip.ip_address})
