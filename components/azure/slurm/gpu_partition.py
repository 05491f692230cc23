"""GpuPartition: one Slurm partition as scale sets of at most 100 VMs, each one InfiniBand fabric.

A scale set with singlePlacementGroup=true keeps its VMs on one IB fabric and holds at most 100;
a bigger partition becomes several sets named <partition>-pg0, -pg1, ... like CycleCloud's.
No resource here grows with the node count: capacity carries it.
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from clusterctl.render.cloud_init import azure_custom_data, render_cloud_init
from clusterctl.spec.catalog import catalog
from clusterctl.spec.model import ClusterSpec, PartitionSpec
from clusterctl.spec.tags import cloud_tags
from clusterctl.spec.topology import scale_sets_of
from components.azure.slurm.cluster_secrets import ClusterSecrets
from components.azure.slurm.images import image_reference
from components.azure.slurm.network import AzureNetwork
from components.azure.slurm.os_profile import linux_os_profile


class GpuPartition(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        spec: ClusterSpec,
        stack: str,
        partition: PartitionSpec,
        *,
        network: AzureNetwork,
        secrets: ClusterSecrets,
        files_account: pulumi.Input[str] | None = None,
        hooks: pulumi.ResourceHookBinding | None = None,
        after: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`hooks` bind to the partition's last scale set (the post-deploy validation);
        `files_account` names /home's Azure Files share, if it has one; every scale set waits
        for `after` (the resize drain: a capacity decrease deletes VMs)."""
        super().__init__("gpu-clusters:azure:GpuPartition", name, None, opts)
        sku = catalog().get(partition.sku, "azure")
        assert sku is not None  # the spec rules refuse unknown SKUs before any component runs
        custom_data = pulumi.Output.all(secrets.munge_key_b64, files_account).apply(
            lambda v: azure_custom_data(
                render_cloud_init(
                    spec, stack, munge_key_b64=v[0], partition=partition, files_account=v[1]
                )
            )
        )
        image = image_reference("gpuNodes", partition.image, catalog().gpu_image(sku))
        self.scale_sets = []
        sets = scale_sets_of(partition.name, partition.nodes, partition.max_nodes_per_scale_set)
        for scale_set in sets:
            tags = cloud_tags(
                spec,
                stack,
                **{"gpu-clusters:role": "compute", "gpu-clusters:partition": partition.name},
            )
            vmss = azure.compute.VirtualMachineScaleSet(
                f"{name}-{scale_set.name}",
                vm_scale_set_name=scale_set.vm_set_name(spec.name),
                resource_group_name=network.resource_group.name,
                location=spec.region,
                sku={"name": sku.name, "tier": "Standard", "capacity": scale_set.size},
                orchestration_mode="Uniform",
                single_placement_group=True,
                platform_fault_domain_count=1,
                overprovision=False,
                upgrade_policy={"mode": "Manual"},
                virtual_machine_profile=vm_profile(
                    spec, partition, scale_set, network, secrets, custom_data, image
                ),
                tags=tags,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    hooks=hooks if scale_set is sets[-1] else None,
                    depends_on=after,
                ),
            )
            self.scale_sets.append((scale_set, vmss))
        self.register_outputs({"scaleSets": [v.name for _, v in self.scale_sets]})


def vm_profile(spec, partition, scale_set, network, secrets, custom_data, image) -> dict:
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
        if partition.spot
        else {"priority": "Regular"}
    )
    return {
        **spot,
        "os_profile": linux_os_profile(
            spec,
            secrets.public_key,
            computer_name_prefix=scale_set.computer_name_prefix,
            custom_data=custom_data,
        ),
        "storage_profile": {
            "image_reference": image,
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
