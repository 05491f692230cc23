"""The scheduler's data disk (/shared: /sched, Slurm's state, the accounting database, Prometheus
and /home) is backed up daily by Azure Backup unless storage.backup.enabled is false: a Backup
vault, a disk policy (daily Incremental snapshots in the OperationalStore, deleted after
retentionDays), the vault's two roles, and the disk's backup instance with its snapshot resource
group; all of it kept on destroy like the disk, and priced in `plan`. Before, the disk had no
snapshot or backup at all."""

from __future__ import annotations

import pytest

from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour
from clusterctl.spec.load import load_stack_spec
from components.azure.slurm.disk_backup import DISK_BACKUP_READER, DISK_SNAPSHOT_CONTRIBUTOR
from tests.conftest import plan_stack, resources
from tests.unit.spec.test_rules_input import assert_refused

VAULT = "azure-native:dataprotection:BackupVault"
POLICY = "azure-native:dataprotection:BackupPolicy"
INSTANCE = "azure-native:dataprotection:BackupInstance"
ROLE = "azure-native:authorization:RoleAssignment"
GROUP = "azure-native:resources:ResourceGroup"
DISK = "azure-native:compute:Disk"
OPERATIONAL = {"dataStoreType": "OperationalStore", "objectType": "DataStoreInfoBase"}


def test_the_data_disk_is_backed_up_daily_with_the_stack_s_retention() -> None:
    plan = plan_stack("azure-h100", "storage.backup.retentionDays=14", "storage.backup.hourUtc=3")
    (vault,) = resources(plan, VAULT)
    assert vault.inputs["identity"] == {"type": "SystemAssigned"}
    (policy,) = resources(plan, POLICY)
    p = policy.inputs["properties"]
    assert p["datasourceTypes"] == ["Microsoft.Compute/disks"]
    backup, retention = p["policyRules"]
    assert backup["backupParameters"]["backupType"] == "Incremental"
    assert backup["dataStore"] == OPERATIONAL
    assert backup["trigger"]["schedule"]["repeatingTimeIntervals"] == [
        "R/2024-01-01T03:00:00+00:00/P1D"
    ]
    (life,) = retention["lifecycles"]
    assert life["sourceDataStore"] == OPERATIONAL
    assert life["deleteAfter"] == {"objectType": "AbsoluteDeleteOption", "duration": "P14D"}
    (disk,) = resources(plan, DISK)
    (instance,) = resources(plan, INSTANCE)
    i = instance.inputs["properties"]
    source = i["dataSourceInfo"]
    assert source["datasourceType"] == source["resourceType"] == "Microsoft.Compute/disks"
    assert source["resourceID"] == source["resourceUri"]
    assert source["resourceID"].endswith(f"/providers/Microsoft.Compute/disks/{disk.name}")
    (store,) = i["policyInfo"]["policyParameters"]["dataStoreParametersList"]
    assert store["objectType"] == "AzureOperationalStoreParameters"
    assert store["resourceGroupId"].endswith("/resourceGroups/rg-h100-azure-h100-snapshots")


def test_the_vault_gets_exactly_the_two_roles_disk_backup_needs() -> None:
    plan = plan_stack("azure-h100")
    principal = "33333333-3333-3333-3333-333333333333"  # the mock vault identity's
    roles = {
        r.inputs["roleDefinitionId"].rsplit("/", 1)[1]: r.inputs["scope"]
        for r in resources(plan, ROLE)
        if r.inputs.get("principalId") == principal
    }
    assert set(roles) == {DISK_BACKUP_READER, DISK_SNAPSHOT_CONTRIBUTOR}
    assert "/providers/Microsoft.Compute/disks/" in roles[DISK_BACKUP_READER]
    assert roles[DISK_SNAPSHOT_CONTRIBUTOR].endswith("/resourceGroups/rg-h100-azure-h100-snapshots")


def test_backups_are_kept_on_destroy_like_the_disk_unless_the_stack_says_otherwise() -> None:
    kept = plan_stack("azure-h100")
    held = [*resources(kept, VAULT), *resources(kept, INSTANCE)]
    held += [
        g for g in resources(kept, GROUP) if g.inputs["resourceGroupName"].endswith("-snapshots")
    ]
    assert len(held) == 3
    for r in held:
        assert r.protect, r.name
        assert r.inputs["tags"]["gpu-clusters:role"] == "storage", r.name
    loose = plan_stack("azure-h100", "storage.keepOnDestroy=false")
    assert not any(r.protect for r in [*resources(loose, VAULT), *resources(loose, INSTANCE)])


def test_backup_off_builds_no_vault_and_prices_none() -> None:
    plan = plan_stack("azure-h100", "storage.backup.enabled=false")
    assert resources(plan, DISK)  # the disk is there, only its backup is not
    assert not plan.run.by_type(VAULT) and not plan.run.by_type(INSTANCE)
    spec, _ = load_stack_spec("azure-h100", ["storage.backup.enabled=false"])
    assert not any("backups" in line.item for line in cost_per_hour(spec, catalog()).lines)


@pytest.mark.parametrize(("size", "files"), [(1024, False), (4096, False), (2048, True)])
def test_plan_prices_one_full_copy_of_the_disk(size: int, files: bool) -> None:
    extra = ["storage.kind=azure-files-nfs"] if files else []
    spec, _ = load_stack_spec("azure-h100", [f"storage.sizeGib={size}", *extra])
    (line,) = [ln for ln in cost_per_hour(spec, catalog()).lines if "backups" in ln.item]
    price = catalog().services["azure"]["diskSnapshot"].usd_per_gb_month
    disk = 128 if files else size  # with /home on the share the scheduler's disk is 128 GiB
    assert line.usd_per_hour == pytest.approx(disk * price / 730, abs=1e-4)
    assert "daily changes" in line.note


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("storage.backup.retentionDays=0", "storage.backup.retentionDays"),
        ("storage.backup.retentionDays=36", "storage.backup.retentionDays"),
        ("storage.backup.hourUtc=24", "storage.backup.hourUtc"),
        ("storage.backup.enabled=1", "storage.backup.enabled"),
    ],
)
def test_bad_backup_settings_are_refused_naming_the_field(override: str, field: str) -> None:
    assert_refused("azure-h100", [override], field, "")
