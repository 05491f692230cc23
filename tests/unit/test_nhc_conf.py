"""Each SKU's nhc.conf carries the checks and thresholds the catalog gives for it."""

from __future__ import annotations

import re

import pytest

from clusterctl.render.engine import render_nhc_conf
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec


@pytest.mark.parametrize(
    "sku_name", ["Standard_ND96isr_H100_v5", "Standard_ND96amsr_A100_v4", "Standard_ND96asr_v4"]
)
def test_nhc_thresholds_come_from_the_catalog(sku_name: str) -> None:
    spec, _ = load_stack_spec("azure-h100", [f"partitions[0].sku={sku_name}"])
    sku = catalog().get(sku_name)
    text = render_nhc_conf(spec, sku, catalog())
    floor = sku.baseline(1).fail_below_gbps
    size_gib = sku.baseline(1).message_bytes >> 30
    # bandwidth, repeats, size, topology file: the order of AzNHC v0.4.5's own function
    assert re.search(rf"^\* \|\| check_nccl_allreduce {floor} 1 {size_gib}G \S+$", text, re.M)
    assert re.search(r'check_fs_mount_rw -t "nfs4" .* -f "/home"', text)
    assert not re.search(r'-t "nfs"', text)
    assert "check_ps_service -u munge -S -d munged munge" in text
    ports = re.findall(rf"check_hw_ib {int(sku.fabric.gbps_per_nic)} (mlx5_ib\d):1", text)
    assert ports == [f"mlx5_ib{i}" for i in range(sku.fabric.nics)]
    assert f"check_gpu_count {sku.gpus}" in text
    assert f"check_ib_bw_gdr {int(sku.fabric.gbps_per_nic * 0.95)}" in text


def test_nhc_options_come_before_variable_assignments() -> None:
    from clusterctl.render.engine import render_cloud_init

    spec, _ = load_stack_spec("azure-h100")
    text = render_cloud_init(spec, "azure-h100", munge_key_b64="eA==", partition=spec.partitions[0])
    line = next(x for x in text.splitlines() if "CHECK_CMD=" in x)
    words = line.split("=", 1)[1].strip('"').split()
    first_assignment = next(i for i, w in enumerate(words) if "=" in w)
    assert all(not w.startswith("-") for w in words[first_assignment:]), line
