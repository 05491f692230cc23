"""storage.lustre builds an Azure Managed Lustre file system for an Azure Slurm stack: its own
subnet (sized by Microsoft's table) behind an NSG that allows Lustre's TCP 988 and 1019-1023
within the VNet only, the AMLFS-Durable-Premium SKU and size asked for, tagged with the stack,
protected unless told otherwise; the GPU and login nodes mount it at boot (the pinned client
where the image has none), the scheduler does not; `plan` prices it or says it cannot.
Before, the field did not exist and a stack had no fast shared file system."""

from __future__ import annotations

import ipaddress
import subprocess
import sys

import pytest
import yaml

from clusterctl.errors import SpecError
from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.versions import node_versions
from clusterctl.spec.catalog import ServicePrice, catalog
from clusterctl.spec.cost import cost_per_hour
from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.lustre import AMLFS_MGS_PLACEHOLDER
from clusterctl.spec.update_policy import diff, refusal
from tests.conftest import plan_stack, resources

AMLFS = "azure-native:storagecache:AmlFilesystem"
SUBNET = "azure-native:network:Subnet"
NSG = "azure-native:network:NetworkSecurityGroup"
ON = "storage.lustre={sizeTib: 16}"


@pytest.fixture(scope="module")
def lustre():
    return plan_stack("azure-h100", ON, "loginNodes.count=1")


def test_the_file_system_has_the_sku_size_subnet_and_stack_tag(lustre) -> None:
    (fs,) = resources(lustre, AMLFS)
    (subnet,) = [s for s in resources(lustre, SUBNET, at_least=3) if "lustre" in s.name]
    assert fs.inputs["sku"] == {"name": "AMLFS-Durable-Premium-125"}
    assert fs.inputs["storageCapacityTiB"] == 16
    assert fs.inputs["filesystemSubnet"].endswith(f"/{subnet.name}")
    assert fs.inputs["maintenanceWindow"] == {"dayOfWeek": "Sunday", "timeOfDayUTC": "02:00"}
    assert "zones" not in fs.inputs
    assert fs.inputs["tags"]["gpu-clusters:stack"] == "azure-h100"
    assert fs.protect is True
    others = [s.inputs["addressPrefix"] for s in resources(lustre, SUBNET) if s is not subnet]
    mine = ipaddress.ip_network(subnet.inputs["addressPrefix"])
    assert mine.prefixlen <= 27  # 16 TiB: a /27 or larger (Microsoft's table)
    assert not any(mine.overlaps(ipaddress.ip_network(o)) for o in others)


def test_its_subnet_allows_lustre_ports_within_the_vnet_only(lustre) -> None:
    (subnet,) = [s for s in resources(lustre, SUBNET) if "lustre" in s.name]
    (nsg,) = [n for n in resources(lustre, NSG, at_least=3) if "lustre" in n.name]
    assert subnet.inputs["networkSecurityGroup"]["id"].endswith(f"/{nsg.name}")
    rules = {r["name"]: r for r in nsg.inputs["securityRules"]}
    for direction in ("Inbound", "Outbound"):
        rule = rules[f"allow-lustre-{direction.lower()}"]
        assert rule["direction"] == direction and rule["access"] == "Allow"
        assert rule["protocol"] == "Tcp"
        assert rule["destinationPortRanges"] == ["988", "1019-1023"]
        assert rule["sourceAddressPrefix"] == rule["destinationAddressPrefix"] == "VirtualNetwork"
    assert rules["deny-internet-inbound"]["access"] == "Deny"


def test_options_reach_the_resource_and_keep_on_destroy_false_unprotects() -> None:
    plan = plan_stack(
        "azure-h100",
        "storage.lustre={throughputMbpsPerTib: 500, sizeTib: 8, zone: '2', keepOnDestroy: false}",
    )
    (fs,) = resources(plan, AMLFS)
    assert fs.inputs["sku"]["name"] == "AMLFS-Durable-Premium-500"
    assert fs.inputs["zones"] == ["2"] and fs.protect is False


def test_off_by_default() -> None:
    plan = plan_stack("azure-h100")
    assert not plan.run.by_type(AMLFS)
    gpu = plan.files["cloud-init/gpu.yaml"]
    assert "lustrefs" not in gpu and "amlfs" not in gpu and "/lustre" not in gpu


def test_gpu_and_login_nodes_mount_it_at_boot_and_the_scheduler_does_not(lustre) -> None:
    pin = node_versions(catalog())["amlfs_lustre"]
    fstab = f"{AMLFS_MGS_PLACEHOLDER}@tcp:/lustrefs /lustre lustre noatime,flock,_netdev,nofail"
    for role in ("gpu", "login"):
        doc = yaml.safe_load(lustre.files[f"cloud-init/{role}.yaml"])
        steps = [str(c) for c in doc["runcmd"]]
        assert any(fstab in c for c in steps), role
        install = next(c for c in steps if "mount.lustre" in c)
        assert f"amlfs-lustre-client-{pin}=$(uname -r)" in install and "exit 1" in install
        # the client step comes before the mounts are tried
        assert steps.index(install) < next(i for i, c in enumerate(steps) if "gpucl-mounts" in c)
        assert "amlfs.list" in doc["apt"]["sources"]
    gpu = yaml.safe_load(lustre.files["cloud-init/gpu.yaml"])
    (enroot,) = [f for f in gpu["write_files"] if f["path"].startswith("/etc/enroot/mounts.d/")]
    assert "/lustre /lustre none x-create=dir,bind,nosuid,nodev,private 0 -1" in enroot["content"]
    sched = lustre.files["cloud-init/scheduler.yaml"]
    assert "lustrefs" not in sched and "amlfs" not in sched


def test_the_bounded_mount_waits_for_lustre_too(lustre) -> None:
    script = lustre.files["scripts/gpucl-mounts.sh"]
    assert "for m in /home /sched /lustre; do" in script
    assert "lctl ping" in script  # the give-up line names what to check


def test_the_node_gets_the_address_azure_reports() -> None:
    spec, _ = load_stack_spec("azure-h100", [ON])
    text = render_cloud_init(
        spec, "azure-h100", munge_key_b64="a2V5", partition=spec.partitions[0],
        lustre_mgs="10.40.1.7",
    )  # fmt: skip
    assert "10.40.1.7@tcp:/lustrefs /lustre lustre" in text
    with pytest.raises(ValueError, match=r"storage\.lustre"):
        render_cloud_init(spec, "azure-h100", munge_key_b64="a2V5", partition=spec.partitions[0])


def test_plan_shows_its_cost_line() -> None:
    spec, _ = load_stack_spec("azure-h100", [ON])
    (line,) = [c for c in cost_per_hour(spec, catalog()).lines if "Managed Lustre" in c.item]
    assert line.sku == "16 TiB AMLFS-Durable-Premium-125" and line.service
    # no rate could be sourced: an unpriced line, not a guess
    assert line.usd_per_hour_each is None


def test_a_sourced_rate_prices_the_provisioned_capacity_per_hour() -> None:
    """When config/services.yaml gets a SKU's rate, the line is its GiB-month price per hour."""
    spec, _ = load_stack_spec(
        "azure-h100", ["storage.lustre={throughputMbpsPerTib: 250, sizeTib: 8}"]
    )
    cat = catalog()
    rate = ServicePrice.model_validate(
        {"title": "Azure Managed Lustre", "usdPerGbMonth": 0.2, "region": "eastus",
         "asOf": "2026-11-28", "source": "a test rate, not a price (stand-in for a sourced one)"}
    )  # fmt: skip
    priced = cat.model_copy(
        update={"services": {**cat.services, "azure": {
            **cat.services["azure"], "managedLustreDurablePremium250": rate}}}
    )  # fmt: skip
    (line,) = [c for c in cost_per_hour(spec, priced).lines if "Managed Lustre" in c.item]
    assert line.usd_per_hour_each == pytest.approx(8 * 1024 * 0.2 / 730, abs=1e-4)


@pytest.mark.parametrize(
    ("overrides", "field", "says"),
    [
        (["storage.lustre={sizeTib: 20}"], "sizeTib", "use 16 or 32"),
        (["storage.lustre={throughputMbpsPerTib: 40, sizeTib: 16}"], "sizeTib", "use 48"),
        (["storage.lustre={throughputMbpsPerTib: 100}"], "throughputMbpsPerTib", "40, 125"),
        (["storage.lustre={sizeTib: 96, subnet: 10.40.2.0/26}"], "subnet", "/24"),
        (["storage.lustre={subnet: 10.40.0.0/24}"], "subnet", "overlaps"),
        (["storage.lustre={subnet: 10.41.0.0/24}"], "subnet", "not inside"),
        (["storage.lustre={mountPoint: /home}"], "mountPoint", "would hide"),
    ],
)
def test_each_refusal_names_the_field_and_the_fix(overrides, field, says) -> None:
    with pytest.raises(SpecError) as err:
        load_stack_spec("azure-h100", overrides)
    (finding,) = [f for f in err.value.findings if f.level == "error"]
    assert finding.field.endswith(field) and says in finding.message, finding


def test_refused_on_kubernetes_stacks() -> None:
    with pytest.raises(SpecError) as err:
        load_stack_spec("aks-h100", [ON])
    assert any(f.field.endswith("storage") for f in err.value.findings), err.value.findings


def test_the_cli_refuses_with_exit_2_and_one_line() -> None:
    got = subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-h100", "--set",
         "storage.lustre={sizeTib: 10}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert got.returncode == 2, got.stderr[-2000:]
    lines = [ln for ln in got.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "storage.lustre.sizeTib" in lines[0], got.stderr
    assert "Traceback" not in got.stderr


def test_adding_it_is_in_place_and_resizing_or_removing_it_is_a_replacement() -> None:
    off, _ = load_stack_spec("azure-h100")
    on, _ = load_stack_spec("azure-h100", [ON])
    assert refusal(diff(off, on), allow_replace=False) is None
    for other in (off, load_stack_spec("azure-h100", ["storage.lustre={sizeTib: 32}"])[0]):
        gone = refusal(diff(on, other), allow_replace=False)
        assert gone and "Managed Lustre" in gone and "--allow-replace" in gone
    later, _ = load_stack_spec(
        "azure-h100", ["storage.lustre={sizeTib: 16, maintenanceDay: Friday}"]
    )
    assert refusal(diff(on, later), allow_replace=False) is None
