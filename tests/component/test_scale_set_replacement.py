"""A GPU scale set edit Azure cannot apply in place (a new VM size, another image release, spot
on or off) replaces the set, deleted first; a moved image version, a resize and a new customData
update it in place, so `pulumi up`'s preview names exactly the sets a change replaces."""

from __future__ import annotations

import pytest

from tests.conftest import plan_stack, resources

VMSS = "azure-native:compute:VirtualMachineScaleSet"
IMAGE = "virtualMachineProfile.storageProfile.imageReference"
MUST_REPLACE = {
    "sku.name",  # a GPU size on another hardware cluster: every VM deallocated first
    f"{IMAGE}.publisher",  # create-time (MicrosoftDocs, "Modify a Virtual Machine Scale Set")
    f"{IMAGE}.offer",
    f"{IMAGE}.sku",  # another Ubuntu release
    "virtualMachineProfile.priority",  # spot on or off (terraform-provider-azurerm: ForceNew)
    "zones",  # create-time
    "platformFaultDomainCount",
}
UPDATED_IN_PLACE = (
    "sku.capacity",
    f"{IMAGE}.version",
    f"{IMAGE}.id",
    "virtualMachineProfile.osProfile.customData",
    "tags",
)
ABSENT_BY_DESIGN = {"zones"}
"""Set by no stack (the spec refuses zones on Azure Slurm); a set that gains them is replaced."""


def _has(inputs: dict, path: str) -> bool:
    value: object = inputs
    for key in path.split("."):
        if not (isinstance(value, dict) and key in value):
            return False
        value = value[key]
    return True


@pytest.fixture(scope="module")
def plans():
    """A regular marketplace-image partition in two scale sets, and a spot one."""
    return {
        "regular": plan_stack(
            "azure-h100", "partitions[0].nodes=3", "partitions[0].maxNodesPerScaleSet=2"
        ),
        "spot": plan_stack("azure-h100", "partitions[0].spot=true"),
    }


@pytest.mark.parametrize("kind", ["regular", "spot"])
def test_every_scale_set_is_deleted_first_and_replaced_on_what_azure_cannot_update(
    plans, kind: str
) -> None:
    sets = resources(plans[kind], VMSS, at_least=2 if kind == "regular" else 1)
    for vmss in sets:
        assert vmss.delete_before_replace is True
        assert set(vmss.replace_on_changes) >= MUST_REPLACE
        for path in UPDATED_IN_PLACE:
            assert not any(
                path == p or path.startswith(f"{p}.") or p.startswith(f"{path}.")
                for p in vmss.replace_on_changes
            ), path


def test_every_replacing_path_names_an_input_the_scale_set_has(plans) -> None:
    """A misspelt path would never match, and the change would fail in Azure instead."""
    seen: set[str] = set()
    named: set[str] = set()
    for plan in plans.values():
        for vmss in resources(plan, VMSS):
            named |= set(vmss.replace_on_changes)
            seen |= {p for p in vmss.replace_on_changes if _has(vmss.inputs, p)}
    assert named >= MUST_REPLACE
    assert seen == named - ABSENT_BY_DESIGN, named - ABSENT_BY_DESIGN - seen
    for vmss in resources(plans["regular"], VMSS):
        assert not _has(vmss.inputs, "zones")
    (spot,) = resources(plans["spot"], VMSS)
    assert spot.inputs["virtualMachineProfile"]["priority"] == "Spot"


def test_a_gallery_image_version_moves_in_place() -> None:
    """A gallery image is one id: a new version is a new id, which Azure updates in place."""
    (vmss,) = resources(plan_stack("azure-gb200"), VMSS)
    image = vmss.inputs["virtualMachineProfile"]["storageProfile"]["imageReference"]
    assert set(image) == {"id"}
    assert not any(p.startswith(f"{IMAGE}.id") for p in vmss.replace_on_changes)
