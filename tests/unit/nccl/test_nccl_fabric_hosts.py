"""Acceptance at the margin: each host's fabric as NCCL saw it, against the SKU's.

The logs are a genuine 2-node all_reduce_perf run with each host's NCCL INFO lines added in the
formats NCCL and aws-ofi-nccl print (tests/data/nccl/derive_fabric_margin.py says which).
"""

from __future__ import annotations

import pytest

from clusterctl.nccl.fabric import hosts_fabric
from clusterctl.nccl.judge import Verdict
from clusterctl.nccl.parse import parse_all_reduce
from clusterctl.validate.run import Options, catalog_thresholds, judge_run
from tests.data.nccl.derive_fabric_margin import efa_log, ib_log

H100 = "Standard_ND96isr_H100_v5"
H200 = "Standard_ND96isr_H200_v5"
P5 = "p5.48xlarge"
ALL_BUT = {i: [d for d in range(8) if d != i] for i in range(8)}


def verdict(text: str, sku: str) -> Verdict:
    run = parse_all_reduce(text)
    th = catalog_thresholds(sku, 2, Options())
    return judge_run(run, th, "2-node", gpus_per_host=8, nodes=2, sku=sku)


def fails(v: Verdict) -> list[str]:
    return [f.message for f in v.findings if f.level == "fail"]


# --- the parser, per host ----------------------------------------------------------------


def test_each_host_keeps_its_own_devices_and_gdr() -> None:
    text = ib_log(338.0, devices={"h100-1": ALL_BUT[5]}, gdr={"h100-0": False})
    a, b = hosts_fabric(text.splitlines())
    assert (a.host, a.kind, a.device_count, a.gdr) == ("h100-0", "infiniband", 8, False)
    assert (b.host, b.kind, b.device_count, b.gdr) == ("h100-1", "infiniband", 7, True)
    assert "mlx5_ib5:1" not in b.devices and a.devices[5] == "mlx5_ib5:1"
    assert (a.net_channels, a.gdr_channels) == (16, 0)  # 8 ranks x send + receive, once each


def test_an_ethernet_vf_in_the_list_is_not_a_fabric_device() -> None:
    (a, _) = hosts_fabric(ib_log(380.0, roce=True).splitlines())
    assert a.device_count == 8 and a.other_devices == ("mlx5_an0:1",)


def test_pxn_channels_through_a_proxy_rank_still_show_gdr() -> None:
    # `via NET/IB/3(11)/GDRDMA`: the old reading stopped at `(` and saw no GPUDirect RDMA
    (a, b) = hosts_fabric(ib_log(380.0, pxn=True).splitlines())
    assert a.gdr is True and b.gdr is True


def test_ofi_nic_count_and_provider_per_host() -> None:
    text = efa_log(360.0, nics={"ip-10-1-45-213": 31}, provider={"ip-10-1-18-77": "efa"})
    a, b = hosts_fabric(text.splitlines())
    assert (a.kind, a.provider, a.device_count, a.gdr) == ("efa", "efa", 32, True)
    assert b.device_count == 31


def test_a_tcp_provider_on_one_host_is_that_hosts_fallback_only() -> None:
    text = efa_log(40.0, provider={"ip-10-1-45-213": "tcp;ofi_rxm"})
    a, b = hosts_fabric(text.splitlines())
    assert (a.kind, b.kind) == ("efa", "socket")
    run = parse_all_reduce(text)
    assert {(n.kind, n.hosts) for n in run.networks} == {
        ("efa", ("ip-10-1-18-77",)),
        ("socket", ("ip-10-1-45-213",)),
    }


# --- the four cases of the issue, and healthy logs of the same formats --------------------


@pytest.mark.parametrize("gone", [5, 0, 7])
@pytest.mark.parametrize("host", ["h100-0", "h100-1"])
def test_a_host_with_one_ib_device_gone_fails_naming_host_and_device(host, gone) -> None:
    v = verdict(ib_log(338.0, devices={host: ALL_BUT[gone]}), H100)
    assert v.status == "fail"
    assert f"{host}: 7 of 8 IB devices, mlx5_ib{gone} missing" in " | ".join(fails(v))
    other = "h100-1" if host == "h100-0" else "h100-0"
    assert not any(m.startswith(other) for m in fails(v))


def test_two_devices_gone_are_both_named() -> None:
    v = verdict(ib_log(300.0, devices={"h100-1": [0, 1, 2, 4, 5, 6]}), H200)
    assert "h100-1: 6 of 8 IB devices, mlx5_ib3, mlx5_ib7 missing" in " | ".join(fails(v))


@pytest.mark.parametrize(("host", "busbw"), [("h100-1", 318.0), ("h100-0", 375.0)])
def test_a_host_without_gpudirect_rdma_fails_naming_it(host, busbw) -> None:
    # even at a healthy-looking figure: the proof is in the channel lines
    v = verdict(ib_log(busbw, gdr={host: False}), H100)
    assert v.status == "fail"
    (msg,) = [m for m in fails(v) if "GPUDirect" in m]
    assert msg.startswith(f"{host}: no GPUDirect RDMA") and "NET/IB" in msg


@pytest.mark.parametrize("busbw", [336.0, 330.0, 300.0])
def test_twelve_percent_under_the_expected_figure_fails_with_everything_healthy(busbw) -> None:
    v = verdict(ib_log(busbw), H100)
    assert v.status == "fail"
    (msg,) = fails(v)
    assert "below the floor 338 GB/s" in msg and "expected 384 GB/s (derived)" in msg


@pytest.mark.parametrize("busbw", [356.0, 345.0])
def test_seven_percent_under_expected_warns(busbw) -> None:
    v = verdict(ib_log(busbw), H100)
    assert v.status == "warn"
    (msg,) = v.reasons
    assert "below the warning level 357 GB/s" in msg
    assert f"expected 384 GB/s (derived): {(busbw - 384) / 384 * 100:+.1f}%" in msg


@pytest.mark.parametrize(
    ("host", "nics"), [("ip-10-1-45-213", 31), ("ip-10-1-18-77", 31), ("ip-10-1-45-213", 16)]
)
def test_an_efa_host_short_of_nics_fails_naming_it(host, nics) -> None:
    v = verdict(efa_log(360.0, nics={host: nics}), P5)
    assert v.status == "fail"
    (msg,) = fails(v)
    assert msg.startswith(f"{host}: {nics} of 32 EFA NICs, NET/OFI found {nics} nics")


@pytest.mark.parametrize(
    ("text", "sku"),
    [
        (ib_log(381.4), H100),
        (ib_log(372.0, hosts=("gpu-pg0-1", "gpu-pg0-2")), H200),
        (ib_log(380.0, roce=True), H100),
        (ib_log(380.0, pxn=True), H100),
        (efa_log(368.5), P5),
        (efa_log(366.0, network="Libfabric"), P5),  # newer plugins name the network so
    ],
)
def test_healthy_logs_of_the_same_formats_pass(text, sku) -> None:
    v = verdict(text, sku)
    assert v.status == "pass", v.reasons
    passed = next(f.message for f in v.findings if f.kind == "bandwidth")
    assert "expected" in passed


def test_no_fabric_lines_judges_bandwidth_alone_and_says_the_fabric_is_unproven() -> None:
    from tests.data.nccl.derive_fabric_margin import GENUINE, scaled

    v = verdict(scaled(GENUINE.read_text(), 380.0), H100)
    assert v.status == "pass"
    (note,) = [f for f in v.findings if f.kind == "fabric"]
    assert note.level == "info" and note.message.startswith("fabric unproven")
    assert "bandwidth alone" in note.message
    # and its bandwidth still counts: the same log 12 % down fails
    assert verdict(scaled(GENUINE.read_text(), 336.0), H100).status == "fail"


def test_a_host_that_printed_no_network_lines_is_unproven() -> None:
    text = "\n".join(line for line in ib_log(380.0).splitlines() if not line.startswith("h100-1:"))
    v = verdict(text, H100)
    assert v.status == "warn"
    assert any(r.startswith("fabric unproven on h100-1") for r in v.reasons)


def test_a_socket_fallback_on_one_host_fails_naming_it() -> None:
    v = verdict(ib_log(40.0, socket=("h100-1",)), H100)
    assert v.status == "fail"
    assert any("NET/Socket" in m and "on h100-1" in m for m in fails(v))


# --- what a person reads -------------------------------------------------------------------


def test_plain_report_prints_each_hosts_fabric_and_expected_vs_measured() -> None:
    from clusterctl.nccl.report import render_plain

    text = render_plain([verdict(ib_log(338.0, devices={"h100-1": ALL_BUT[5]}), H100)])
    assert "fabric h100-0: IB, mlx5_ib0..7 (8 IB devices), GPUDirect RDMA (16/16 channels)" in text
    assert "fabric h100-1: IB, mlx5_ib0, mlx5_ib1, mlx5_ib2, mlx5_ib3, mlx5_ib4, mlx5_ib6" in text
    assert "[SKU: 8 IB devices, GPUDirect RDMA]" in text
    assert "expected 384 GB/s (derived) at 16 GiB, measured 338.00 (-12.0%)" in text
    assert "warn below 357, fail below 338" in text
    assert "2-node: h100-1: 7 of 8 IB devices, mlx5_ib5 missing" in text


def test_json_carries_hosts_fabric_expectation_and_reasons() -> None:
    from clusterctl.nccl.report import to_json

    (g,) = to_json([verdict(efa_log(360.0, nics={"ip-10-1-45-213": 31}), P5)])["groups"]
    by_host = {f["host"]: f for f in g["fabric"]}
    assert by_host["ip-10-1-45-213"]["device_count"] == 31
    assert by_host["ip-10-1-18-77"] | {"devices": None} == {
        "host": "ip-10-1-18-77", "network": "AWS Libfabric", "kind": "efa", "devices": None,
        "device_count": 32, "other_devices": [], "provider": "efa", "gdr": True,
        "net_channels": 16, "gdr_channels": 16,
    }  # fmt: skip
    assert g["fabric_expected"]["devices"] == 32 and g["fabric_expected"]["gdr"] is True
    assert (g["thresholds"]["expected_gbps"], g["thresholds"]["expected_basis"]) == (
        366.0,
        "derived",
    )
    assert g["reasons"][0].startswith("ip-10-1-45-213: 31 of 32 EFA NICs")


def test_junit_has_a_fabric_case_that_fails_naming_the_host() -> None:
    import xml.etree.ElementTree as ET

    from clusterctl.nccl.report import to_junit

    xml = to_junit([verdict(ib_log(318.0, gdr={"h100-1": False}), H100)])
    suite = ET.fromstring(xml.split("?>", 1)[1]).find("testsuite")
    assert suite is not None
    failure = suite.find("testcase[@name='fabric']/failure")
    assert failure is not None and failure.get("message", "").startswith(
        "h100-1: no GPUDirect RDMA"
    )
    out = suite.find("testcase[@name='fabric']/system-out")
    assert out is not None and "fabric h100-0:" in (out.text or "")
    bw = suite.find("testcase[@name='bandwidth']/system-out")
    assert bw is not None and "expected 384 GB/s (derived)" in (bw.text or "")
