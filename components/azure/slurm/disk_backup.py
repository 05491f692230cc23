"""SharedDiskBackup: Azure Backup for the scheduler's data disk (storage.backup).

Azure Disk Backup (Microsoft.DataProtection, api 2024-04-01; shapes from Azure/azure-rest-api-specs
`specification/dataprotection/.../2024-04-01/examples` and Microsoft Learn
backup/backup-azure-dataprotection-use-rest-api-backup-disks): a Backup vault with a system-assigned
identity, a policy of daily Incremental backups to the OperationalStore (incremental snapshots, the
only data store disks support) deleted after `retentionDays`, and a backup instance of the disk
whose snapshots go to a resource group of their own. The vault's identity needs "Disk Backup
Reader" on the disk and "Disk Snapshot Contributor" on that group (Az.DataProtection's
`manifests/AzureDisk.json`: datasourcePermissions, snapshotRGPermissions). Everything here is
tagged as storage and protected like the disk: `down` keeps the backups unless --include-storage.
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from components.azure.slurm.props import DiskBackupProps

DISK_BACKUP_READER = "3e5e47e6-65f7-47ef-90b5-e5dd4d455f24"
DISK_SNAPSHOT_CONTRIBUTOR = "7efff54f-a5b4-42b5-a1c5-5411624893ce"
DISKS = "Microsoft.Compute/disks"
OPERATIONAL = {"data_store_type": "OperationalStore", "object_type": "DataStoreInfoBase"}


def daily_schedule(hour_utc: int) -> str:
    """ISO 8601 repeating interval: every day (P1D) from a fixed start at `hour_utc`."""
    return f"R/2024-01-01T{hour_utc:02d}:00:00+00:00/P1D"


def _role_id(scope_id: str, role: str) -> str:
    subscription = "/".join(scope_id.split("/")[:3])
    return f"{subscription}/providers/Microsoft.Authorization/roleDefinitions/{role}"


class SharedDiskBackup(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        props: DiskBackupProps,
        *,
        disk: azure.compute.Disk,
        resource_group: azure.resources.ResourceGroup,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:SharedDiskBackup", name, None, opts)
        tags = dict(props.tags)
        # Protected: what holds or makes the snapshots (tagged storage, so `down --include-storage`
        # can lift it). The policy and the role assignments carry no tags; `down` keeps them as
        # long as the instance, which depends on them.
        kept = pulumi.ResourceOptions(parent=self, protect=props.keep)
        child = pulumi.ResourceOptions(parent=self)
        self.snapshot_group = azure.resources.ResourceGroup(
            f"{name}-snapshots",
            resource_group_name=props.snapshot_group,
            location=props.region,
            tags=tags,
            opts=kept,
        )
        self.vault = azure.dataprotection.BackupVault(
            f"{name}-vault",
            resource_group_name=resource_group.name,
            location=props.region,
            identity={"type": "SystemAssigned"},
            properties={
                "storage_settings": [{"datastore_type": "VaultStore", "type": "LocallyRedundant"}],
            },
            tags=tags,
            opts=kept,
        )
        self.policy = azure.dataprotection.BackupPolicy(
            f"{name}-policy",
            resource_group_name=resource_group.name,
            vault_name=self.vault.name,
            properties={
                "object_type": "BackupPolicy",
                "datasource_types": [DISKS],
                "policy_rules": [
                    {
                        "object_type": "AzureBackupRule",
                        "name": "BackupDaily",
                        "backup_parameters": {
                            "object_type": "AzureBackupParams",
                            "backup_type": "Incremental",
                        },
                        "data_store": OPERATIONAL,
                        "trigger": {
                            "object_type": "ScheduleBasedTriggerContext",
                            "schedule": {
                                "repeating_time_intervals": [daily_schedule(props.hour_utc)],
                                "time_zone": "UTC",
                            },
                            "tagging_criteria": [
                                {
                                    "is_default": True,
                                    "tagging_priority": 99,
                                    "tag_info": {"tag_name": "Default"},
                                }
                            ],
                        },
                    },
                    {
                        "object_type": "AzureRetentionRule",
                        "name": "Default",
                        "is_default": True,
                        "lifecycles": [
                            {
                                "source_data_store": OPERATIONAL,
                                "delete_after": {
                                    "object_type": "AbsoluteDeleteOption",
                                    "duration": f"P{props.retention_days}D",
                                },
                            }
                        ],
                    },
                ],
            },
            opts=child,
        )
        principal = self.vault.identity.apply(lambda i: i.principal_id if i else "")
        self.reader = azure.authorization.RoleAssignment(
            f"{name}-disk-reader",
            principal_id=principal,
            principal_type="ServicePrincipal",
            role_definition_id=disk.id.apply(lambda i: _role_id(i, DISK_BACKUP_READER)),
            scope=disk.id,
            opts=child,
        )
        self.snapshots = azure.authorization.RoleAssignment(
            f"{name}-snapshot-contributor",
            principal_id=principal,
            principal_type="ServicePrincipal",
            role_definition_id=self.snapshot_group.id.apply(
                lambda i: _role_id(i, DISK_SNAPSHOT_CONTRIBUTOR)
            ),
            scope=self.snapshot_group.id,
            opts=child,
        )
        self.instance = azure.dataprotection.BackupInstance(
            f"{name}-instance",
            resource_group_name=resource_group.name,
            vault_name=self.vault.name,
            properties={
                "object_type": "BackupInstance",
                "friendly_name": props.friendly_name,
                "data_source_info": {
                    "object_type": "Datasource",
                    "datasource_type": DISKS,
                    "resource_type": DISKS,
                    "resource_id": disk.id,
                    "resource_uri": disk.id,
                    "resource_name": disk.name,
                    "resource_location": props.region,
                },
                "policy_info": {
                    "policy_id": self.policy.id,
                    "policy_parameters": {
                        "data_store_parameters_list": [
                            {
                                "object_type": "AzureOperationalStoreParameters",
                                "data_store_type": "OperationalStore",
                                "resource_group_id": self.snapshot_group.id,
                            }
                        ]
                    },
                },
            },
            tags=tags,
            # Azure checks the vault's permissions when the instance is made
            opts=pulumi.ResourceOptions.merge(
                kept, pulumi.ResourceOptions(depends_on=[self.reader, self.snapshots])
            ),
        )
        self.register_outputs({"vaultId": self.vault.id})
