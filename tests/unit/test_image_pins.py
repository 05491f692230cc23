"""Issue 29 item 4: images at version `latest` are named by plan with the way to pin them, and the
scheduler's image can be pinned (headNode.image) as the GPU nodes' can (partitions[].image).
Before: no warning, and no field for the scheduler's image at all."""

from __future__ import annotations

import pytest

from clusterctl.errors import UserError
from clusterctl.spec.load import load_stack_spec
from tests.conftest import plan_stack, resources

HPC = "microsoft-dsvm:ubuntu-hpc:2204:22.04.2026072901"
UBUNTU = "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:22.04.202611010"


def _pin_warnings(*overrides: str) -> dict[str, str]:
    _, findings = load_stack_spec("azure-h100", list(overrides))
    return {f.field: f.message for f in findings if "is not pinned" in f.message}


def test_plan_names_every_unpinned_image_with_how_to_pin_it() -> None:
    found = _pin_warnings()
    assert set(found) == {
        "gpu-clusters:cluster.headNode.image",
        "gpu-clusters:cluster.partitions[0].image",
    }
    assert (
        "az vm image list -l eastus -p microsoft-dsvm -f ubuntu-hpc -s 2204 --all"
        in (found["gpu-clusters:cluster.partitions[0].image"])
    )


def test_pinned_images_reach_the_vms_and_silence_the_warning() -> None:
    assert _pin_warnings(f"headNode.image={UBUNTU}", f"partitions[0].image={HPC}") == {}
    plan = plan_stack("azure-h100", f"headNode.image={UBUNTU}", f"partitions[0].image={HPC}")
    (vm,) = [
        r for r in resources(plan, "azure-native:compute:VirtualMachine") if "scheduler" in r.name
    ]
    assert vm.inputs["storageProfile"]["imageReference"]["version"] == "22.04.202611010"
    (vmss,) = resources(plan, "azure-native:compute:VirtualMachineScaleSet")
    ref = vmss.inputs["virtualMachineProfile"]["storageProfile"]["imageReference"]
    assert ref["version"] == "22.04.2026072901"


def test_a_head_image_is_refused_where_there_is_no_scheduler_vm() -> None:
    with pytest.raises(UserError) as err:
        load_stack_spec("aks-h100", [f"headNode.image={UBUNTU}"])
    assert "headNode.image" in str(err.value)
    with pytest.raises(UserError) as err:
        load_stack_spec("azure-h100", ["headNode.image=ubuntu-latest"])
    assert "is not an image URN" in str(err.value)
