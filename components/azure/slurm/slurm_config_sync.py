"""SlurmConfigSync: a resize reaches the running cluster without restarting a node.

GPU nodes run configless (slurmd --conf-server); the scheduler holds the only copy of slurm.conf,
gres.conf and topology.conf. This Azure Run Command (Microsoft.Compute/virtualMachines/runCommands)
carries those files in its script (the run's SlurmPlan, clusterctl/render/roles.py); when
`nodes` or the partitions change, the script's text changes, Pulumi updates the run command and
Azure runs it again: it rewrites what changed and runs `scontrol reconfigure`. It needs no SSH
(so it works behind a jump host, and without the private key) and no provider beyond
azure-native. The scheduler VM itself ignores later changes of its customData (its first-boot
copy of the same files), so a resize never replaces the scheduler.

Order within one `up`: SlurmResizeDrain (drain the nodes that leave, wait until they are idle),
then the scale sets' capacity, then SlurmConfigSync (the files, `scontrol reconfigure`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure


@dataclass(frozen=True)
class RunCommandProps:
    """Where a scheduler Run Command goes: the scheduler VM's region, resource group and tags."""

    location: str
    tags: Mapping[str, str]
    vm: azure.compute.VirtualMachine
    resource_group_name: pulumi.Input[str]


def _run_command(
    component: pulumi.ComponentResource,
    name: str,
    script: str,
    props: RunCommandProps,
    *,
    command_name: str,
    after: list[pulumi.Resource],
) -> azure.compute.VirtualMachineRunCommandByVirtualMachine:
    """A root bash script run once on the scheduler by Azure, failing the deployment if it fails;
    Azure runs it again whenever its text changes."""
    return azure.compute.VirtualMachineRunCommandByVirtualMachine(
        f"{name}-run",
        resource_group_name=props.resource_group_name,
        vm_name=props.vm.name,
        run_command_name=command_name,
        location=props.location,
        source={"script": script},
        async_execution=False,
        timeout_in_seconds=3600,
        treat_failure_as_deployment_failure=True,
        tags=dict(props.tags),
        opts=pulumi.ResourceOptions(parent=component, depends_on=[props.vm, *after]),
    )


class SlurmConfigSync(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        script: str,
        props: RunCommandProps,
        *,
        after: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`script`: the run's SlurmPlan.config_sync. `after`: the scale sets. On growth the new
        VMs exist before slurm.conf names them: their slurmd is refused and retries
        (Restart=always) until the reconfigure lets it in, whereas names listed first would be
        powered-down nodes a waiting job could try to start before their VMs exist (set DOWN).
        On a shrink the VMs are gone, drained and idle, before their names leave slurm.conf."""
        super().__init__("gpu-clusters:azure:SlurmConfigSync", name, None, opts)
        self.script = script
        self.command = _run_command(
            self, name, script, props, command_name="gpu-clusters-slurm-config", after=after or []
        )
        self.register_outputs({})


class SlurmResizeDrain(pulumi.ComponentResource):
    """Drains the nodes a shrink removes and waits (bounded) until none runs a job; the scale
    sets depend on it, so Azure deletes VMs only once Slurm no longer uses them. The script
    (SlurmPlan.resize_drain) names the nodes the stack keeps, so it runs again on every resize;
    with slurmctld not yet running (a new scheduler) it has nothing to drain and returns at once."""

    def __init__(
        self,
        name: str,
        script: str,
        props: RunCommandProps,
        *,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:SlurmResizeDrain", name, None, opts)
        self.script = script
        self.command = _run_command(
            self, name, script, props, command_name="gpu-clusters-slurm-drain", after=[]
        )
        self.register_outputs({})


class SlurmTeamSync(pulumi.ComponentResource):
    """The stack's team (users, accounts, QoS) onto the running cluster: the script
    (render/team.py: render_team_sync) writes the team files to /sched and updates Slurm's
    associations and the scheduler's users; the other nodes take the users within a minute. Its
    text holds the team, so Azure runs it again when the team changes (`clusterctl users
    add/remove`, then `up`): no reboot, no redeploy."""

    def __init__(
        self,
        name: str,
        script: str,
        props: RunCommandProps,
        *,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:SlurmTeamSync", name, None, opts)
        self.script = script
        self.command = _run_command(
            self, name, script, props, command_name="gpu-clusters-team", after=[]
        )
        self.register_outputs({})
