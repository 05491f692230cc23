"""RealMemory per SKU comes from the memory the guest sees, never above it.

0.95 x the advertised 1900 GiB of an ND96amsr_A100_v4 (1,848,320 MiB) is more than its guest sees
(MemTotal 1,857,830,712 kB = 1,814,288 MiB): slurmctld would mark every such node INVAL.
"""

from __future__ import annotations

import re

import pytest

from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import render_slurm
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec

GALLERY_IMAGE = (
    "/subscriptions/0b4d3a2c-1111-2222-3333-444455556666/resourceGroups/img/providers/"
    "Microsoft.Compute/galleries/hpc/images/ubuntu-hpc-gb200-2404/versions/2026.0528.1"
)
AZURE_GPU = [s.name for s in catalog().skus if s.cloud == "azure" and s.gpus]


@pytest.mark.parametrize("sku_name", AZURE_GPU)
def test_real_memory_is_at_most_what_the_guest_sees(sku_name: str) -> None:
    sku = catalog().get(sku_name)
    assert sku is not None
    if sku.guest_memory is None:
        # unpublished (the catalog's note says why): then plan must say RealMemory is a guess
        from clusterctl.spec.rules import node_shape_fits

        nodes = f"partitions[0].nodes={max(2, sku.nodes_per_nvlink_domain)}"  # whole NVL blocks
        # a size with no marketplace HPC image needs one of the user's (a gallery image version)
        image = f"partitions[0].image={GALLERY_IMAGE}"
        spec, _ = load_stack_spec("azure-h100", [f"partitions[0].sku={sku_name}", nodes, image])
        found = [f.message for f in node_shape_fits(spec, catalog()) if f.level == "warning"]
        assert any("RealMemory is 95%" in m for m in found), found
        assert sku.note and "guestMemory" in sku.note
        return
    spec, _ = load_stack_spec("azure-h100", [f"partitions[0].sku={sku_name}"])
    conf = render_slurm(spec, cloud_site(spec))["slurm.conf"]
    real = {int(m) for m in re.findall(r"RealMemory=(\d+)", conf)}
    visible_mib = sku.guest_memory.mem_total_ki_b // 1024
    assert real == {sku.real_memory_mib}
    assert sku.real_memory_mib <= visible_mib
    # and no more than Azure's own memory check tolerates below MemTotal
    assert sku.real_memory_mib >= visible_mib * (1 - sku.guest_memory.tolerance_percent / 100) - 1


def test_a100_80gb_regression() -> None:
    sku = catalog().get("Standard_ND96amsr_A100_v4")
    assert sku is not None
    assert int(sku.memory_mib * 0.95) > 1_814_288  # the old rule: above what the guest sees
    assert sku.real_memory_mib == 1_759_859
