"""Images: every shipped stack boots dated image versions (a VM made later boots what its
neighbours booted), `plan` names an unpinned image with the way to pin it, and a stack may name an
Azure Compute Gallery image version (the only way to boot a GB200 HPC image)."""

from __future__ import annotations

import pytest

from clusterctl.errors import UserError
from clusterctl.project import find_project
from clusterctl.spec.catalog import catalog
from clusterctl.spec.images import parse_azure_image, role_images
from clusterctl.spec.load import load_stack_spec
from tests.conftest import plan_stack, resources

HPC = "microsoft-dsvm:ubuntu-hpc:2204:22.04.2026072901"
UBUNTU = "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:22.04.202611010"
GALLERY = (
    "/subscriptions/0b4d3a2c-1111-2222-3333-444455556666/resourceGroups/img/providers/"
    "Microsoft.Compute/galleries/hpc/images/ubuntu-hpc-gb200-2404/versions/2026.0528.1"
)
SHIPPED = find_project().stacks()
# The warnings a shipped stack keeps on purpose: each names something only its user can supply
# (their own address range, their own gallery image) or a fact no public source gives.
EXPECTED_WARNINGS = {
    ("*", "ssh.allowedCidrs[0]", "documentation range"),
    ("azure-gb200", "partitions[0].image", "is a placeholder"),
    ("azure-gb200", "partitions[0].sku", "the memory its guest sees is not published"),
}


def _pin_warnings(*overrides: str) -> dict[str, str]:
    _, findings = load_stack_spec("azure-h100", list(overrides))
    return {f.field: f.message for f in findings if "is not pinned" in f.message}


def test_plan_names_every_unpinned_image_with_how_to_pin_it() -> None:
    found = _pin_warnings(
        "headNode.image=Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest",
        "partitions[0].image=microsoft-dsvm:ubuntu-hpc:2204:latest",
    )
    assert set(found) == {
        "gpu-clusters:cluster.headNode.image",
        "gpu-clusters:cluster.partitions[0].image",
    }
    assert (
        "az vm image list -l eastus -p microsoft-dsvm -f ubuntu-hpc -s 2204 --all"
        in (found["gpu-clusters:cluster.partitions[0].image"])
    )
    unversioned = GALLERY.rsplit("/versions/", 1)[0]
    found = _pin_warnings(f"partitions[0].image={unversioned}")
    assert "az sig image-version list" in found["gpu-clusters:cluster.partitions[0].image"]


@pytest.mark.parametrize("stack", SHIPPED)
def test_a_shipped_stack_plans_with_no_warning_but_its_placeholders(stack: str) -> None:
    spec, findings = load_stack_spec(stack, [])
    got = {
        (f.field.removeprefix("gpu-clusters:cluster."), f.message)
        for f in findings
        if f.level != "info"
    }
    for field, message in got:
        assert any(
            s in (stack, "*") and field == fld and text in message
            for s, fld, text in EXPECTED_WARNINGS
        ), (field, message)
    for item in role_images(spec, catalog()):
        image = parse_azure_image(item.image)
        assert image is not None and (image.pinned or image.placeholder), item


def test_every_catalog_image_is_a_dated_version_with_its_source() -> None:
    azure = catalog().images["azure"]
    entries = [azure["scheduler"], azure["gpuNodes"]["default"]]
    entries += azure["gpuNodes"]["alternatives"] + list(azure["gpuNodes"]["families"].values())
    for entry in entries:
        version = str(entry["version"])
        assert version.lower() != "latest" and version[:2].isdigit(), entry["urn"]
        assert entry["urn"] == ":".join(
            str(entry[k]) for k in ("publisher", "offer", "sku", "version")
        )
        assert version in entry["versionSource"]


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


def test_a_gallery_image_version_reaches_the_scale_set_by_id() -> None:
    assert _pin_warnings(f"partitions[0].image={GALLERY}") == {}
    plan = plan_stack("azure-h100", f"partitions[0].image={GALLERY}")
    (vmss,) = resources(plan, "azure-native:compute:VirtualMachineScaleSet")
    ref = vmss.inputs["virtualMachineProfile"]["storageProfile"]["imageReference"]
    assert ref == {"id": GALLERY}


def test_a_head_image_is_refused_where_there_is_no_scheduler_vm() -> None:
    with pytest.raises(UserError) as err:
        load_stack_spec("aks-h100", [f"headNode.image={UBUNTU}"])
    assert "headNode.image" in str(err.value)
    with pytest.raises(UserError) as err:
        load_stack_spec("azure-h100", ["headNode.image=ubuntu-latest"])
    assert "is not an image URN" in str(err.value)
