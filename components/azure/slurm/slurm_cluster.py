"""AzureSlurmCluster: a CycleCloud-like Slurm cluster in one Pulumi program.

Network -> secrets -> (the Azure Files share for /home, storage.kind azure-files-nfs) -> scheduler
node -> (Azure Managed Lustre, storage.lustre) -> one GpuPartition per spec partition. Outputs
carry what `clusterctl validate` and `clusterctl status` need (SlurmClusterOutputs in
clusterctl/outputs.py); with validation.nccl.onDeploy the NCCL validation runs as a hook on the
last scale set, bound by the entry point that runs the program (`post_deploy`: __main__.py,
`clusterctl plan`), so the program itself imports no validation code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi

from clusterctl import outputs as out
from clusterctl.render.roles import SlurmPlan, plan_slurm
from clusterctl.render.site import scheduler_host
from clusterctl.render.storage import uses_files_share
from clusterctl.render.team import render_team_sync
from clusterctl.render.user_data import UserDataPlan
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.tags import cloud_tags
from components.azure.slurm.cluster_secrets import ClusterSecrets
from components.azure.slurm.disk_backup import SharedDiskBackup
from components.azure.slurm.files_share import AzureFilesShare
from components.azure.slurm.gpu_partition import GpuPartition
from components.azure.slurm.jump_host import JumpHost
from components.azure.slurm.login_node import LoginNode
from components.azure.slurm.managed_lustre import ManagedLustre
from components.azure.slurm.network import AzureNetwork
from components.azure.slurm.power_role import PowerRole
from components.azure.slurm.props import slurm_base_props, slurm_node_props
from components.azure.slurm.scheduler_node import SchedulerNode
from components.azure.slurm.slurm_config_sync import (
    RunCommandProps,
    SlurmConfigSync,
    SlurmResizeDrain,
    SlurmTeamSync,
)

PostDeploy = Callable[[ClusterSpec, str, Mapping[str, Any]], None]
"""The post-deploy NCCL validation (clusterctl/validate/hook.py: run_post_deploy): given the spec,
the stack and the resolved stack outputs, it logs the verdict and raises to fail the update."""


class AzureSlurmCluster(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        spec: ClusterSpec,
        stack: str,
        opts: pulumi.ResourceOptions | None = None,
        *,
        plan: SlurmPlan | None = None,
        user_data: UserDataPlan | None = None,
        post_deploy: PostDeploy | None = None,
    ):
        """`plan`, `user_data`: the files and each role's user-data rendered once for this run
        (made here when not given);
        `post_deploy`: what binds validation.nccl.onDeploy (no hook without it)."""
        super().__init__("gpu-clusters:azure:SlurmCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.plan = plan = plan or plan_slurm(spec, stack)
        # the spec read once into what each node component needs (components/azure/slurm/props.py)
        props = slurm_node_props(spec, stack, plan, user_data)
        base = slurm_base_props(spec, stack)
        self.network = AzureNetwork(f"{name}-net", base.network, child)
        self.secrets = ClusterSecrets(f"{name}-secrets", base.secrets, child)
        self.files = (
            AzureFilesShare(f"{name}-files", base.files_share, network=self.network, opts=child)
            if uses_files_share(spec)
            else None
        )
        files_account = self.files.account_name if self.files else None
        self.lustre = (
            ManagedLustre(f"{name}-lustre", base.lustre, network=self.network, opts=child)
            if base.lustre is not None
            else None
        )
        lustre_mgs = self.lustre.mgs_address if self.lustre else None
        self.scheduler = SchedulerNode(
            f"{name}-scheduler",
            props.scheduler,
            network=self.network,
            secrets=self.secrets,
            files_account=files_account,
            # the share, its private endpoint and DNS record exist before a node mounts /home
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.files] if self.files else []),
        )
        self.backup = (
            SharedDiskBackup(
                f"{name}-backup",
                base.disk_backup,
                disk=self.scheduler.data_disk,
                resource_group=self.network.resource_group,
                opts=child,
            )
            if spec.storage.backup.enabled
            else None
        )
        self.logins = [
            LoginNode(
                f"{name}-login-{i + 1}",
                login,
                network=self.network,
                secrets=self.secrets,
                files_account=files_account,
                lustre_mgs=lustre_mgs,
                opts=child,
            )
            for i, login in enumerate(props.logins)
        ]
        self.jump_host = (
            JumpHost(
                f"{name}-jump",
                base.jump_host,
                network=self.network,
                secrets=self.secrets,
                opts=child,
            )
            if spec.ssh.access == "jumphost"
            else None
        )
        cat = catalog()
        address = (
            self.scheduler.public_ip.ip_address
            if self.scheduler.public_ip is not None
            else self.scheduler.private_ip
        )
        hooks = self._validation_hook(spec, stack, address, post_deploy)
        on_scheduler = RunCommandProps(
            location=spec.region,
            tags=cloud_tags(spec, stack, **{"gpu-clusters:role": "scheduler"}),
            vm=self.scheduler.vm,
            resource_group_name=self.network.resource_group.name,
        )
        self.resize_drain = SlurmResizeDrain(
            f"{name}-slurm-drain", plan.resize_drain, on_scheduler, opts=child
        )
        last = spec.partitions[-1].name
        self.partitions = [
            GpuPartition(
                f"{name}-{part.partition}",
                part,
                network=self.network,
                secrets=self.secrets,
                files_account=files_account,
                lustre_mgs=lustre_mgs,
                hooks=hooks if part.partition == last else None,
                after=[self.resize_drain.command],
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.scheduler.vm]),
            )
            for part in props.partitions
        ]
        self.power_role = PowerRole(
            f"{name}-power",
            cluster=spec.name,
            stack=stack,
            principal_id=self.scheduler.identity.identity.principal_id,
            resource_group=self.network.resource_group,
            scale_sets=[(g.name, v) for gp in self.partitions for g, v in gp.scale_sets],
            opts=child,
        )
        self.config_sync = SlurmConfigSync(
            f"{name}-slurm-config",
            plan.config_sync,
            on_scheduler,
            after=[v for gp in self.partitions for _, v in gp.scale_sets],
            opts=child,
        )
        if spec.head_node.accounting:  # the team is a set of Slurm associations
            self.team_sync = SlurmTeamSync(
                f"{name}-slurm-team", render_team_sync(spec, stack), on_scheduler, opts=child
            )
        scale_sets = {
            p.name: [g.vm_set_name(spec.name) for g, _ in gp.scale_sets]
            for p, gp in zip(spec.partitions, self.partitions, strict=True)
        }
        self.outputs: dict[str, Any] = {
            out.RESOURCE_GROUP: self.network.resource_group.name,
            out.EGRESS_ADDRESS: self.network.egress_ip.ip_address,
            out.SCHEDULER_HOST: scheduler_host(spec),
            out.SCHEDULER_ADDRESS: address,
            out.ADMIN_USER: spec.ssh.admin_user,
            out.SSH_COMMAND: self._ssh_command(spec, address),
            out.PARTITIONS: partition_outputs(spec, cat, scale_sets),
        }
        self.outputs[out.LOGIN_ADDRESSES] = pulumi.Output.all(
            *[login.address for login in self.logins]
        )
        if self.jump_host is not None:
            self.outputs[out.JUMP_HOST_ADDRESS] = self.jump_host.public_ip.ip_address
        if self.secrets.private_key is not None:
            self.outputs[out.SSH_PRIVATE_KEY] = self.secrets.private_key
        self.register_outputs(self.outputs)

    def _ssh_command(self, spec: ClusterSpec, address: pulumi.Input[str]) -> pulumi.Output[str]:
        user = spec.ssh.admin_user
        if self.jump_host is None:
            return pulumi.Output.concat("ssh ", user, "@", address)
        return pulumi.Output.concat(
            "ssh -J ", user, "@", self.jump_host.public_ip.ip_address, " ", user, "@", address
        )

    def post_deploy_validation_outputs(self, spec: ClusterSpec) -> dict[str, Any]:
        """What the NCCL validation needs to reach the cluster, known before the nodes exist
        (the hook adds schedulerAddress once it resolves)."""
        return {
            out.SCHEDULER: spec.scheduler,
            out.SCHEDULER_HOST: scheduler_host(spec),
            out.ADMIN_USER: spec.ssh.admin_user,
            out.DRAIN_PREFIX: spec.health_checks.drain_prefix,
            out.PARTITIONS: partition_outputs(spec, catalog()),
        }

    def _validation_hook(
        self,
        spec: ClusterSpec,
        stack: str,
        address: pulumi.Output[str],
        post_deploy: PostDeploy | None,
    ) -> pulumi.ResourceHookBinding | None:
        """Post-deploy NCCL validation (validation.nccl.onDeploy): runs after the last scale set
        is created; hooks never fire under mocks, so clusterctl/validate/hook.py is tested apart."""
        if not spec.validation.nccl.on_deploy or post_deploy is None:
            return None
        known = self.post_deploy_validation_outputs(spec)
        address.apply(lambda value: known.__setitem__(out.SCHEDULER_ADDRESS, value))
        hook = pulumi.ResourceHook(
            f"{spec.name}-nccl-validation",
            lambda _args: post_deploy(spec, stack, dict(known)),
            # a raising hook fails the update unless its errors are ignored: onFailure warn
            opts=pulumi.ResourceHookOptions(
                ignore_errors=spec.validation.nccl.on_failure == "warn"
            ),
        )
        return pulumi.ResourceHookBinding(after_create=[hook])


def partition_outputs(
    spec: ClusterSpec, cat: Catalog, scale_sets: dict[str, list[str]] | None = None
) -> list[out.PartitionOutput]:
    """The `partitions` output: one entry per spec partition, in the spec's order."""
    rows: list[out.PartitionOutput] = []
    for i, p in enumerate(spec.partitions):
        row: out.PartitionOutput = {
            "name": p.name,
            "sku": p.sku,
            "nodes": p.nodes,
            "gpusPerNode": cat.require(p.sku, field=f"partitions[{i}].sku").gpus,
        }
        if scale_sets is not None:
            row["scaleSets"] = scale_sets[p.name]
        rows.append(row)
    return rows
