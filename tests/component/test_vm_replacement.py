"""A scheduler, login or jump host VM that must be replaced (its image pin moved, its size,
admin user or key changed) is deleted before its successor is created, and the successor takes
the same NIC (so the same private and public address) and, on the scheduler, the same data disk.

Pulumi's default replacement creates the new VM first, while the old one still holds the NIC
and the disk; Azure cannot change a VM's image in place (pulumi/pulumi-azure-native issue 1117)."""

from __future__ import annotations

import pytest

from tests.conftest import plan_stack, resources

VM = "azure-native:compute:VirtualMachine"
NIC = "azure-native:network:NetworkInterface"
DISK = "azure-native:compute:Disk"

NOT_UPDATABLE = {
    "storageProfile.imageReference",
    "hardwareProfile.vmSize",
    "osProfile.adminUsername",
    "osProfile.linuxConfiguration.ssh.publicKeys",
}


@pytest.fixture(scope="module")
def team():
    """Scheduler, a login node and a jump host in one plan."""
    return plan_stack("azure-team", "ssh.access=jumphost")


def _vms(plan) -> dict[str, object]:
    return {r.inputs["tags"]["gpu-clusters:role"]: r for r in resources(plan, VM, at_least=3)}


def _at(inputs: dict, path: str):
    value = inputs
    for key in path.split("."):
        assert isinstance(value, dict) and key in value, f"{path}: no input {key!r}"
        value = value[key]
    return value


@pytest.mark.parametrize("role", ["scheduler", "login", "jumphost"])
def test_a_replaced_vm_is_deleted_first_and_replaced_on_what_azure_cannot_update(
    team, role: str
) -> None:
    vm = _vms(team)[role]
    assert vm.delete_before_replace is True
    assert set(vm.replace_on_changes) >= NOT_UPDATABLE
    for path in vm.replace_on_changes:  # a misspelt path would silently never match
        _at(vm.inputs, path)
    # customData stays ignored: a Slurm or team change never replaces the VM
    assert not any(p.startswith("osProfile.customData") for p in vm.replace_on_changes)
    assert vm.ignore_changes == ([] if role == "jumphost" else ["osProfile.customData"])


@pytest.mark.parametrize("role", ["scheduler", "login", "jumphost"])
def test_the_nic_outlives_the_vm_so_the_successor_keeps_its_addresses(team, role: str) -> None:
    vm = _vms(team)[role]
    (ref,) = vm.inputs["networkProfile"]["networkInterfaces"]
    assert ref["deleteOption"] == "Detach"
    nic_name = ref["id"].rsplit("/", 1)[1]
    (nic,) = [n for n in resources(team, NIC, at_least=3) if n.name == nic_name]
    assert nic.delete_before_replace is False  # the NIC itself is never replaced with the VM
    assert vm.inputs["storageProfile"]["osDisk"]["deleteOption"] == "Delete"
    if role == "scheduler":  # /home, /sched, Slurm's state, MariaDB, Prometheus
        (disk,) = resources(team, DISK)
        (attached,) = vm.inputs["storageProfile"]["dataDisks"]
        assert attached["createOption"] == "Attach"
        assert attached["deleteOption"] == "Detach"
        assert attached["managedDisk"]["id"].rsplit("/", 1)[1] == disk.name
        assert disk.protect is True
        assert disk.delete_before_replace is False and disk.replace_on_changes == []
