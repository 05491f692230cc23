"""`validate --nccl` as a person reads it: each host's fabric, expected vs measured and
the reason, on the terminal, in --json, --junit and `validate history`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.cli.conftest import H100, NCCL_DATA, run_cli


def from_log(cli, sample: str, sku: str = H100, *more: str):
    return cli("validate", "--nccl", "--from-log", str(NCCL_DATA / sample), "--sku", sku,
               "--nodes", "2", *more)  # fmt: skip


@pytest.mark.parametrize(
    ("sample", "sku", "code", "lines"),
    [
        ("derived_h100_7_of_8_ib.txt", H100, 1,
         ["h100-1: 7 of 8 IB devices, mlx5_ib5 missing",
          "fabric h100-0: IB, mlx5_ib0..7 (8 IB devices), GPUDirect RDMA (16/16 channels) "
          "[SKU: 8 IB devices, GPUDirect RDMA]",
          "expected 384 GB/s (derived) at 16 GiB, measured 338.00 (-12.0%); warn below 357, "
          "fail below 338"]),
        ("derived_h100_no_gdr.txt", H100, 1,
         ["h100-1: no GPUDirect RDMA", "fabric h100-1: IB, mlx5_ib0..7 (8 IB devices), no "
          "GPUDirect RDMA (0/16 channels)"]),
        ("derived_h100_12pct_low.txt", H100, 1,
         ["is below the floor 338 GB/s", "expected 384 GB/s (derived): -12.5%"]),
        ("derived_p5_31_nics.txt", "p5.48xlarge", 1,
         ["ip-10-1-45-213: 31 of 32 EFA NICs, NET/OFI found 31 nics",
          "fabric ip-10-1-45-213: AWS Libfabric, provider efa, 31 EFA NICs"]),
        ("derived_h100_healthy.txt", H100, 0,
         ["expected 384 GB/s (derived) at 16 GiB, measured 381.40 (-0.7%)", "NCCL validation: "
          "pass"]),
        ("derived_p5_healthy.txt", "p5.48xlarge", 0, ["32 EFA NICs, GPUDirect RDMA"]),
    ],
)  # fmt: skip
def test_the_terminal_shows_fabric_expected_and_reason(cli, sample, sku, code, lines) -> None:
    res = from_log(cli, sample, sku)
    assert res.exit_code == code, res.output
    flat = " ".join(res.stdout.split())
    for line in lines:
        assert " ".join(line.split()) in flat, line


def test_json_and_junit_carry_them(cli, tmp_path) -> None:
    junit = tmp_path / "r.xml"
    res = from_log(cli, "derived_h100_7_of_8_ib.txt", H100, "--json", "--junit", str(junit))
    assert res.exit_code == 1
    (g,) = json.loads(res.stdout)["groups"]
    assert [f["device_count"] for f in g["fabric"]] == [8, 7]
    assert g["thresholds"]["expected_gbps"] == 384.0
    assert g["reasons"][0] == (
        "h100-1: 7 of 8 IB devices, mlx5_ib5 missing (NCCL uses what it finds: the host's share "
        "of the bandwidth drops with each device lost)"
    )
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    failure = suite.find("testcase[@name='fabric']/failure")
    assert failure is not None and "mlx5_ib5 missing" in failure.get("message", "")


def test_the_history_command_shows_each_hosts_fabric(cli, tmp_path, monkeypatch) -> None:
    from clusterctl.validate.history import ENV

    monkeypatch.setenv(ENV, str(tmp_path / "h.sqlite"))
    res = from_log(cli, "derived_h100_no_gdr.txt", H100, "--record", "azure-h100", "--json")
    assert res.exit_code == 1, res.output
    res = cli("validate", "history", "-s", "azure-h100", "--json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["runs"]
    assert row["fabric"] == "h100-0 8 IB GDR; h100-1 8 IB no GDR"
    assert row["expected_gbps"] == 384.0
    assert row["reasons"][0].startswith("h100-1: no GPUDirect RDMA")

    table = run_cli("validate", "history", "-s", "azure-h100", COLUMNS="")  # piped: not wrapped
    assert "h100-1 8 IB no GDR" in table.stdout
