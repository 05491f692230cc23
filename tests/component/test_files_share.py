"""storage.kind azure-files-nfs builds /home on a premium Azure Files NFS 4.1 share:
reachable only through a private endpoint in the compute subnet (public access off, the account
firewall denying all, no shared keys, TLS 1.2), resolved through a private DNS zone linked to the
VNet, protected like the scheduler's disk, and mounted at /home by every role with Microsoft's
NFS options. Before, the kind was accepted and the plan was identical to scheduler-nfs."""

from __future__ import annotations

import yaml

from clusterctl.plan.mockengine import azure_name
from clusterctl.render.storage import FILES_ACCOUNT_PLACEHOLDER, FILES_MOUNT_OPTIONS
from tests.conftest import plan_stack, resources

ACCOUNT = "azure-native:storage:StorageAccount"
SHARE = "azure-native:storage:FileShare"
ENDPOINT = "azure-native:network:PrivateEndpoint"
ZONE = "azure-native:privatedns:PrivateZone"
LINK = "azure-native:privatedns:VirtualNetworkLink"
DNS_GROUP = "azure-native:network:PrivateDnsZoneGroup"
SUBNET = "azure-native:network:Subnet"
VNET = "azure-native:network:VirtualNetwork"
DISK = "azure-native:compute:Disk"
SOURCE = f"{FILES_ACCOUNT_PLACEHOLDER}.file.core.windows.net:/{FILES_ACCOUNT_PLACEHOLDER}/home"


def _plan(*overrides: str):
    return plan_stack("azure-h100", "storage.kind=azure-files-nfs", *overrides)


def test_the_share_is_private_to_the_vnet_and_kept_on_destroy() -> None:
    plan = _plan("storage.sizeGib=2048")
    (account,) = resources(plan, ACCOUNT)
    a = account.inputs
    assert (a["kind"], a["sku"]["name"]) == ("FileStorage", "Premium_LRS")  # NFS: premium only
    assert a["publicNetworkAccess"] == "Disabled"
    assert a["networkRuleSet"] == {"defaultAction": "Deny", "bypass": "None"}
    assert a["allowBlobPublicAccess"] is False and a["allowSharedKeyAccess"] is False
    assert a["minimumTlsVersion"] == "TLS1_2"
    assert a["enableHttpsTrafficOnly"] is False  # NFS 4.1 shares cannot be mounted with it on
    assert a["accountName"].startswith("gpucl") and len(a["accountName"]) == 24
    assert a["accountName"].isalnum() and a["accountName"].islower()
    assert a["tags"]["gpu-clusters:stack"] == "azure-h100"
    assert a["tags"]["gpu-clusters:role"] == "storage"
    (share,) = resources(plan, SHARE)
    assert share.inputs["enabledProtocols"] == "NFS" and share.inputs["shareQuota"] == 2048
    assert share.inputs["shareName"] == "home"
    assert account.protect and share.protect
    unprotected = _plan("storage.keepOnDestroy=false")
    assert not any(
        r.protect for r in unprotected.run.by_type(ACCOUNT) + unprotected.run.by_type(SHARE)
    )

    compute = next(s for s in resources(plan, SUBNET, at_least=2) if "compute" in s.name)
    (endpoint,) = resources(plan, ENDPOINT)
    assert endpoint.inputs["subnet"]["id"].endswith(f"/{compute.name}")
    (conn,) = endpoint.inputs["privateLinkServiceConnections"]
    assert conn["groupIds"] == ["file"] and conn["privateLinkServiceId"].endswith(
        f"/{account.name}"
    )
    (zone,) = resources(plan, ZONE)
    assert zone.inputs["privateZoneName"] == "privatelink.file.core.windows.net"
    (link,) = resources(plan, LINK)
    (vnet,) = resources(plan, VNET)
    assert link.inputs["virtualNetwork"]["id"].endswith(f"/{vnet.name}")
    assert link.inputs["registrationEnabled"] is False
    (group,) = resources(plan, DNS_GROUP)
    (config,) = group.inputs["privateDnsZoneConfigs"]
    # the zone's id ends with the name Azure gives it (its privateZoneName)
    assert config["privateDnsZoneId"].endswith(f"/{azure_name(zone.type, zone.name, zone.inputs)}")


def test_every_role_mounts_home_from_the_share_and_the_scheduler_exports_only_sched() -> None:
    plan = _plan()
    sched = yaml.safe_load(plan.files["cloud-init/scheduler.yaml"])
    gpu = yaml.safe_load(plan.files["cloud-init/gpu.yaml"])
    fstab_home = f"{SOURCE} /home nfs {FILES_MOUNT_OPTIONS},_netdev,nofail 0 0"
    for doc in (sched, gpu):
        assert any(fstab_home in str(c) for c in doc["runcmd"]), doc["runcmd"]
        assert not any("/shared/home" in str(c) for c in doc["runcmd"])
    (exports,) = [f for f in sched["write_files"] if f["path"].startswith("/etc/exports.d/")]
    assert "/shared/home" not in exports["content"] and "/shared/sched" in exports["content"]
    nhc = plan.files["nodes/gpu/nhc.conf"]
    assert '-s "*.file.core.windows.net:/*/home" -f "/home"' in nhc
    (disk,) = resources(plan, DISK)
    assert disk.inputs["diskSizeGB"] == 128  # /sched, slurmctld state, MariaDB only


def test_scheduler_nfs_builds_no_share() -> None:
    plan = plan_stack("azure-h100")
    for type_ in (ACCOUNT, SHARE, ENDPOINT, ZONE):
        assert plan.run.by_type(type_) == []
    assert "/shared/home /home none bind" in plan.files["cloud-init/scheduler.yaml"]
