"""AksMaintenance: when AKS may upgrade the cluster and reimage its nodes.

Without a window AKS applies node image updates (the default NodeImage channel reimages nodes
weekly) and patch upgrades at any time, draining GPU nodes under running jobs. The two
AKS-managed schedules put both into one stated weekly window (MAINTENANCE_WINDOW); outside it
AKS starts neither. The GPU and network drivers do not upgrade themselves either
(clusterctl/spec/kubernetes_addons.py, templates/k8s/nic-cluster-policy.yaml.j2): a new driver
reaches a node when the node is reimaged in this window.
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from clusterctl.spec.kubernetes import MAINTENANCE_WINDOW

SCHEDULES = ("aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule")
"""The config names AKS reserves for the cluster upgrade and the node OS upgrade windows."""


def maintenance_window() -> azure.containerservice.MaintenanceWindowArgs:
    w = MAINTENANCE_WINDOW
    return azure.containerservice.MaintenanceWindowArgs(
        schedule=azure.containerservice.ScheduleArgs(
            weekly=azure.containerservice.WeeklyScheduleArgs(
                interval_weeks=1, day_of_week=w["dayOfWeek"]
            )
        ),
        start_time=w["startTime"],
        utc_offset=w["utcOffset"],
        duration_hours=w["durationHours"],
    )


class AksMaintenance(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        resource_group_name: pulumi.Input[str],
        cluster_name: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:AksMaintenance", name, None, opts)
        self.schedules = [
            azure.containerservice.MaintenanceConfiguration(
                f"{name}-{config}",
                resource_group_name=resource_group_name,
                resource_name_=cluster_name,
                config_name=config,
                maintenance_window=maintenance_window(),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for config in SCHEDULES
        ]
        self.register_outputs({"window": dict(MAINTENANCE_WINDOW)})
