"""Each SKU's nhc.conf carries the checks and thresholds the catalog gives for it."""

from __future__ import annotations

import re

import pytest

from clusterctl.render.health import render_nhc_conf, render_nhc_deep_conf
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec

# Azure/azurehpc-health-checks v0.4.5 (commit 2b9dca7) conf/<sku>.conf, as written there:
# check_ib_bw_gdr and check_hw_physmem (NHC's MB is 1024 kB).
AZURE_CONF = {
    "Standard_ND96asr_v4": ("180.0", "928858388kB 928858388kB 3%"),
    "Standard_ND96amsr_A100_v4": ("180.0", "1857830712kB 1857830712kB 3%"),
    "Standard_ND96isr_H100_v5": ("380", f"{1915071 * 1024}kB {1915071 * 1024}kB 5%"),
    "Standard_ND96isr_H200_v5": ("360", "1909409116kB 1909409116kB 3%"),
}


def test_gdr_floor_and_guest_memory_are_azures_own_per_sku() -> None:
    for sku_name, (gdr, physmem) in AZURE_CONF.items():
        spec, _ = load_stack_spec("azure-h100", [f"partitions[0].sku={sku_name}"])
        sku = catalog().get(sku_name)
        deep = render_nhc_deep_conf(spec, sku, catalog())
        fast = render_nhc_conf(spec, sku, catalog())
        assert f"* || check_ib_bw_gdr {float(gdr):g}\n" in deep, sku_name
        assert f"* || check_hw_physmem {physmem}\n" in fast, sku_name


@pytest.mark.parametrize(
    "sku_name", ["Standard_ND96isr_H100_v5", "Standard_ND96amsr_A100_v4", "Standard_ND96asr_v4"]
)
def test_nhc_thresholds_come_from_the_catalog(sku_name: str) -> None:
    spec, _ = load_stack_spec("azure-h100", [f"partitions[0].sku={sku_name}"])
    sku = catalog().get(sku_name)
    text = render_nhc_conf(spec, sku, catalog())
    deep = render_nhc_deep_conf(spec, sku, catalog())
    floor = sku.baseline(1).fail_below_gbps
    size_gib = sku.baseline(1).message_bytes >> 30
    # bandwidth, repeats, size, topology file: the order of AzNHC v0.4.5's own function
    assert re.search(rf"^\* \|\| check_nccl_allreduce {floor} 1 {size_gib}G \S+$", deep, re.M)
    assert re.search(r'check_fs_mount_rw -t "nfs4" .* -f "/home"', text)
    assert not re.search(r'-t "nfs"', text)
    assert "check_ps_service -u munge -S -d munged munge" in text
    ports = re.findall(rf"check_hw_ib {int(sku.fabric.gbps_per_nic)} (mlx5_ib\d):1", text)
    assert ports == [f"mlx5_ib{i}" for i in range(sku.fabric.nics)]
    assert f"gpucl_check_gpu_count {sku.gpus}" in text
    assert f"check_ib_bw_gdr {sku.fabric.gdr_floor_gbps:g}" in deep


# What the periodic (fast) tier may call: LBNL NHC 1.4.3's built-ins (scripts/lbnl_*.nhc at tag
# 1.4.3) and the functions of our own gpucl.nhc. Azure's customTests functions exist only inside
# the azurehpc-health-checks container; on the host NHC they are "not found" and drain every node.
LBNL_BUILTINS = {
    "check_fs_mount",
    "check_fs_mount_rw",
    "check_fs_mount_ro",
    "check_ps_service",
    "check_hw_ib",
    "check_hw_eth",
    "check_hw_physmem",
    "check_hw_cpuinfo",
    "check_file_test",
}


def test_fast_tier_calls_only_functions_the_host_nhc_has() -> None:
    from clusterctl.render.health import render_nhc_checks

    ours = set(re.findall(r"^function (\w+)\(\)", render_nhc_checks(), re.M))
    assert ours, "gpucl.nhc defines no checks"
    spec, _ = load_stack_spec("azure-h100")
    sku = catalog().get(spec.partitions[0].sku)
    text = render_nhc_conf(spec, sku, catalog())
    called = {line.split("||", 1)[1].split()[0] for line in text.splitlines() if "||" in line}
    assert called, "no checks in the fast tier"
    assert called <= LBNL_BUILTINS | ours, called - LBNL_BUILTINS - ours
    assert "check_nccl_allreduce" not in text and "check_ib_bw_gdr" not in text


def test_nhc_options_come_before_variable_assignments() -> None:
    from clusterctl.render.cloud_init import render_cloud_init

    spec, _ = load_stack_spec("azure-h100")
    text = render_cloud_init(spec, "azure-h100", munge_key_b64="eA==", partition=spec.partitions[0])
    line = next(x for x in text.splitlines() if "CHECK_CMD=" in x)
    words = line.split("=", 1)[1].strip('"').split()
    first_assignment = next(i for i, w in enumerate(words) if "=" in w)
    assert all(not w.startswith("-") for w in words[first_assignment:]), line
