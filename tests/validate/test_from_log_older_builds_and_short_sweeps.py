"""`validate --from-log` on ND logs of older nccl-tests builds, and runs that
stop short of the baseline's message size."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.validate.conftest import DATA

H100 = ("--sku", "Standard_ND96isr_H100_v5")
GIB = 1 << 30


def test_pci_bus_only_ids_on_azure_nd_are_eight_gpus_not_one(cli, tmp_path: Path) -> None:
    # Older nccl-tests print the PCI bus number only; on ND VMs every GPU is [0x00], each in its
    # own PCI domain, and the device index tells them apart.
    text = (DATA / "nccl_tests_issue309_h100_2node.txt").read_text()
    text, n = re.subn(r"\[0000:[0-9a-f]{2}:00\]", "[0x00]", text)
    assert n == 16
    log = tmp_path / "nd_bus_only.txt"
    log.write_text(text)
    res = cli("--nccl", "--from-log", str(log), *H100, "--nodes", "2", "--json")
    data = json.loads(res.stdout)
    messages = [f["message"] for f in data["groups"][0]["findings"]]
    assert not any("share one GPU" in m for m in messages), messages
    assert res.exit_code == 0 and data["status"] == "pass"


def test_bus_only_ids_still_catch_two_ranks_on_one_device(cli, tmp_path: Path) -> None:
    text = (DATA / "nccl_tests_issue309_h100_2node.txt").read_text()
    text = re.sub(r"\[0000:[0-9a-f]{2}:00\]", "[0x00]", text)
    text = text.replace("on bm-h100-01 device  1 [0x00]", "on bm-h100-01 device  0 [0x00]")
    log = tmp_path / "two_on_one.txt"
    log.write_text(text)
    res = cli("--nccl", "--from-log", str(log), *H100, "--nodes", "2", "--json")
    data = json.loads(res.stdout)
    messages = [f["message"] for f in data["groups"][0]["findings"]]
    assert any("ranks 0, 1 share one GPU on bm-h100-01" in m for m in messages), messages
    assert res.exit_code == 1


def _nd_h100_single_node_log(busbw_by_gib: dict[int, float]) -> str:
    from clusterctl.nccl.emit import format_all_reduce, row_from_times
    from clusterctl.nccl.model import RankInfo

    rows = []
    for gib, busbw in sorted(busbw_by_gib.items()):
        size = gib * GIB
        t_us = size * 2 * 7 / 8 / (busbw * 1e3)  # busbw = size / t * 2(n-1)/n with n = 8
        rows.append(row_from_times(size, t_us, t_us, n_ranks=8))
    ranks = [RankInfo(d, "nd-0", d, "NVIDIA H100", 100 + d, 0, f"0x{d:02x}") for d in range(8)]
    return format_all_reduce(rows, ranks=ranks)


def _judge_log(cli, tmp_path: Path, busbw_by_gib: dict[int, float]):
    log = tmp_path / "nd_h100_1node.txt"
    log.write_text(_nd_h100_single_node_log(busbw_by_gib))
    res = cli("--nccl", "--from-log", str(log), *H100, "--nodes", "1", "--json")
    return res, json.loads(res.stdout)


def test_a_good_8_gib_sweep_passes_along_the_baseline_curve(cli, tmp_path: Path) -> None:
    # Azure's own ND H100 v5 sweep (466-479 GB/s at 1-8 GiB) stops short of the 16 GiB floor
    res, data = _judge_log(cli, tmp_path, {1: 466.4, 2: 472.4, 4: 475.6, 8: 478.9})
    assert res.exit_code == 0 and data["status"] == "pass", res.output
    sizes = {s["size_bytes"]: s for s in data["groups"][0]["sizes"]}
    assert sizes[8 * GIB]["floor_gbps"] == 460.0
    assert 447 < sizes[GIB]["floor_gbps"] < 449  # 460 x 466.35 / 478.87


def test_a_run_37_percent_below_the_floor_flat_from_1_to_8_gib_fails(cli, tmp_path: Path) -> None:
    res, data = _judge_log(cli, tmp_path, dict.fromkeys((1, 2, 4, 8), 290.0))
    assert res.exit_code == 1 and data["status"] == "fail", res.output
    (bad,) = [f for f in data["groups"][0]["findings"] if f["level"] == "fail"]
    assert "below the floor" in bad["message"] and "curve" in bad["message"]


def test_a_dip_below_the_curve_at_a_smaller_size_fails(cli, tmp_path: Path) -> None:
    # above the 16 GiB floor at 8 GiB but far under the curve at 1 GiB
    res, data = _judge_log(cli, tmp_path, {1: 380.0, 2: 472.4, 4: 475.6, 8: 478.9})
    assert res.exit_code == 1 and data["status"] == "fail"
