"""The Azure Slurm cluster under Pulumi's mock engine: the values that matter, against FACTS.md."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conftest import plan_stack, resources

VMSS = "azure-native:compute:VirtualMachineScaleSet"
NSG = "azure-native:network:NetworkSecurityGroup"


@pytest.fixture(scope="module")
def h100():
    return plan_stack("azure-h100")


@pytest.fixture(scope="module")
def a100():
    return plan_stack("azure-a100")


@pytest.mark.parametrize(
    ("fixture", "sku"),
    [("h100", "Standard_ND96isr_H100_v5"), ("a100", "Standard_ND96amsr_A100_v4")],
)
def test_scale_sets_share_one_fabric(request, fixture: str, sku: str) -> None:
    plan = request.getfixturevalue(fixture)
    (vmss,) = resources(plan, VMSS)
    inputs = vmss.inputs
    assert inputs["sku"]["name"] == sku
    assert inputs["sku"]["capacity"] == plan.spec.partitions[0].nodes
    assert inputs["singlePlacementGroup"] is True
    assert inputs["platformFaultDomainCount"] == 1
    assert inputs["overprovision"] is False
    image = inputs["virtualMachineProfile"]["storageProfile"]["imageReference"]
    assert (image["publisher"], image["offer"]) == ("microsoft-dsvm", "ubuntu-hpc")
    nic = inputs["virtualMachineProfile"]["networkProfile"]["networkInterfaceConfigurations"][0]
    assert nic["enableAcceleratedNetworking"] is True
    assert all("publicIPAddressConfiguration" not in ip for ip in nic["ipConfigurations"])
    os_profile = inputs["virtualMachineProfile"]["osProfile"]
    assert os_profile["linuxConfiguration"]["disablePasswordAuthentication"] is True


def test_custom_data_carrying_the_munge_key_is_secret(h100) -> None:
    (vmss,) = resources(h100, VMSS)
    assert "virtualMachineProfile.osProfile.customData" in vmss.secret_paths
    (vm,) = resources(h100, "azure-native:compute:VirtualMachine")
    assert "osProfile.customData" in vm.secret_paths
    (munge,) = resources(h100, "random:index/randomBytes:RandomBytes")
    assert munge.inputs["length"] >= 1024
    assert "sshPrivateKey" in h100.run.secret_outputs


def test_ssh_only_from_allowed_cidrs(h100) -> None:
    by_name = {r.name: r for r in resources(h100, NSG, at_least=2)}
    sched = by_name["h100-net-scheduler-nsg"].inputs["securityRules"]
    allow = [r for r in sched if r["access"] == "Allow"]
    assert len(allow) == 1
    assert allow[0]["destinationPortRange"] == "22"
    assert allow[0]["sourceAddressPrefixes"] == list(h100.spec.ssh.allowed_cidrs)
    for nsg in by_name.values():
        for rule in nsg.inputs["securityRules"]:
            if rule["access"] == "Allow":
                assert rule.get("sourceAddressPrefix") not in ("*", "Internet", "0.0.0.0/0")
    compute = by_name["h100-net-compute-nsg"].inputs["securityRules"]
    assert [r["access"] for r in compute] == ["Deny"]


def _ssh_ips(plan):
    """Public IPs a VM is reached on (the NAT gateway's egress IP takes no inbound traffic)."""
    ips = resources(plan, "azure-native:network:PublicIPAddress")
    return [p for p in ips if not p.name.endswith("-egress-ip")]


def test_compute_has_no_public_ip_and_scheduler_has_one(h100) -> None:
    (pip,) = _ssh_ips(h100)
    assert pip.parent == "h100-scheduler"
    jump = plan_stack("azure-h100", "ssh.access=jumphost")
    (pip,) = _ssh_ips(jump)
    assert pip.parent == "h100-jump"
    assert jump.run.outputs["sshCommand"].startswith("ssh -J azureuser@198.51.100.10 azureuser@")


def test_identity_holds_only_the_power_role_on_the_clusters_scale_sets() -> None:
    """The unused Reader on the resource group becomes a custom role with exactly the
    actions the power program calls, assigned per scale set (two groups here)."""
    from components.azure.slurm.power_role import POWER_ROLE_ACTIONS
    from tests.power.test_power_azure import ROLE_ACTION_OF_OPERATION

    plan = plan_stack("azure-h100", "partitions[0].nodes=150")
    (role,) = resources(plan, "azure-native:authorization:RoleDefinition")
    (perm,) = role.inputs["permissions"]
    assert sorted(perm["actions"]) == sorted(POWER_ROLE_ACTIONS)
    # nothing beyond what the power program's requests need (test_power_azure records them)
    assert set(perm["actions"]) == set(ROLE_ACTION_OF_OPERATION.values())
    assert not perm.get("notActions") and not perm.get("dataActions")
    assert role.inputs["roleType"] == "CustomRole"
    assert role.inputs["assignableScopes"] == [role.inputs["scope"]]
    assert "/resourceGroups/" in role.inputs["scope"]
    identity = "11111111-1111-1111-1111-111111111111"  # the mock scheduler identity's principal
    assigned = [
        a
        for a in resources(plan, "azure-native:authorization:RoleAssignment", at_least=2)
        if a.inputs["principalId"] == identity
    ]
    sets = {v.inputs["vmScaleSetName"]: v for v in resources(plan, VMSS, at_least=2)}
    assert len(assigned) == len(sets) == 2
    for a in assigned:
        assert a.inputs["scope"].rsplit("/", 1)[1] in sets  # a scale set, nothing wider
        assert "/providers/Microsoft.Compute/virtualMachineScaleSets/" in a.inputs["scope"]
        assert a.inputs["roleDefinitionId"].endswith("/h100-power-def")
        assert a.inputs["principalType"] == "ServicePrincipal"


def test_shared_disk_is_protected_unless_the_stack_says_otherwise(h100) -> None:
    (disk,) = resources(h100, "azure-native:compute:Disk")
    assert disk.protect is True
    assert disk.inputs["tags"]["gpu-clusters:role"] == "storage"
    loose = plan_stack("azure-h100", "storage.keepOnDestroy=false")
    (disk,) = resources(loose, "azure-native:compute:Disk")
    assert disk.protect is False


def test_every_taggable_resource_carries_stack_and_cluster(h100) -> None:
    checked = 0
    for res in h100.run.resources:
        if res.custom and res.type.startswith("azure-native:") and "tags" in res.inputs:
            assert res.inputs["tags"]["gpu-clusters:stack"] == "azure-h100"
            assert res.inputs["tags"]["gpu-clusters:cluster"] == "h100"
            checked += 1
    assert checked >= 9


def test_spot_partition() -> None:
    plan = plan_stack("azure-h100", "partitions[0].spot=true")
    (vmss,) = resources(plan, VMSS)
    profile = vmss.inputs["virtualMachineProfile"]
    assert profile["priority"] == "Spot"
    # Deallocate, not Delete: the evicted VM keeps its instance id, so its Slurm node name.
    assert profile["evictionPolicy"] == "Deallocate"


def test_512_nodes_become_six_scale_sets_and_nothing_else_grows(h100) -> None:
    big = plan_stack("azure-h100", "partitions[0].nodes=512")
    sets = resources(big, VMSS, at_least=6)
    capacities = [s.inputs["sku"]["capacity"] for s in sets]
    assert len(sets) == 6
    assert sum(capacities) == 512 and max(capacities) <= 100
    names = sorted(s.inputs["vmScaleSetName"] for s in sets)
    assert names == [f"h100-gpu-pg{i}" for i in range(6)]
    # one power-role assignment per scale set, like the set itself; nothing else grows
    per_set = (VMSS, "azure-native:authorization:RoleAssignment")
    assigned = resources(big, per_set[1], at_least=6)
    assert sum("/virtualMachineScaleSets/" in a.inputs["scope"] for a in assigned) == 6
    assert len(assigned) == len(resources(h100, per_set[1])) + 5  # the rest do not grow
    small = Counter(r.type for r in h100.run.resources if r.type not in per_set)
    large = Counter(r.type for r in big.run.resources if r.type not in per_set)
    assert small == large


def test_outputs_for_later_commands(h100) -> None:
    out = h100.run.outputs
    assert out["schedulerHost"] == "h100-scheduler"
    assert out["adminUser"] == "azureuser"
    assert out["sshCommand"].startswith("ssh azureuser@")
    assert out["partitions"][0]["sku"] == "Standard_ND96isr_H100_v5"
    assert out["partitions"][0]["nodes"] == 2
    assert out["costPerHourUsd"] > 190


def test_post_deploy_validation_hook_binds_to_the_last_scale_set(h100) -> None:
    assert all(not r.after_create_hooks for r in h100.run.resources)
    plan = plan_stack("azure-h100", "validation.nccl.onDeploy=true", "partitions[0].nodes=150")
    sets = sorted(resources(plan, VMSS, at_least=2), key=lambda r: r.inputs["vmScaleSetName"])
    assert [bool(s.after_create_hooks) for s in sets] == [False, True]
    assert sets[-1].after_create_hooks == ["h100-nccl-validation"]


def test_resize_reaches_the_scheduler_through_a_run_command_not_a_new_vm() -> None:
    """2 -> 3 nodes changes the run command's script (the new slurm.conf and
    `scontrol reconfigure`); the scheduler VM ignores its customData, so it is not replaced."""
    small, big = plan_stack("azure-h100"), plan_stack("azure-h100", "partitions[0].nodes=3")
    scripts = []
    for plan in (small, big):
        (vm,) = resources(plan, "azure-native:compute:VirtualMachine")
        assert vm.ignore_changes == ["osProfile.customData"]
        (run,) = [
            r
            for r in resources(
                plan, "azure-native:compute:VirtualMachineRunCommandByVirtualMachine"
            )
            if r.inputs["runCommandName"] == "gpu-clusters-slurm-config"
        ]
        assert run.inputs["vmName"] == vm.inputs.get("vmName", "h100-scheduler-vm")
        assert run.inputs["treatFailureAsDeploymentFailure"] is True
        script = run.inputs["source"]["script"]
        assert "scontrol reconfigure" in script
        scripts.append(script)
    assert scripts[0] != scripts[1]
    (vmss,) = resources(big, VMSS)
    assert vmss.inputs["sku"]["capacity"] == 3


def test_a_resize_drains_before_any_scale_set_changes_and_syncs_slurm_after() -> None:
    """Every scale set waits for the drain Run Command (a shrink deletes VMs only once Slurm has
    drained them and they are idle); the config sync waits for every scale set."""
    plan = plan_stack("azure-h100", "partitions[0].nodes=150")
    runs = {
        r.inputs["runCommandName"]: r
        for r in resources(plan, "azure-native:compute:VirtualMachineRunCommandByVirtualMachine")
    }
    drain, sync = runs["gpu-clusters-slurm-drain"], runs["gpu-clusters-slurm-config"]
    sets = resources(plan, VMSS, at_least=2)
    assert [s.inputs["sku"]["capacity"] for s in sets] == [100, 50]
    assert all(drain.name in s.depends_on for s in sets)
    assert {s.name for s in sets} <= set(sync.depends_on)
    assert "<<'B64'" not in drain.inputs["source"]["script"]  # writes no file
    assert "keep='gpu-pg0-[1-100],gpu-pg1-[1-50]'" in drain.inputs["source"]["script"]
