"""Which network NCCL chose, from its INFO lines (a fallback to sockets fails as such)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl.nccl.fabric import networks_in
from clusterctl.nccl.judge import Thresholds, judge
from clusterctl.nccl.parse import parse_all_reduce

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl"
FLOOR = Thresholds(300.0, None, 16 << 30, "test floor")


def run_of(name: str):
    return parse_all_reduce((DATA / name).read_text())


@pytest.mark.parametrize(
    ("sample", "name", "kind", "provider", "gdr"),
    [
        ("derived_azure_ib_gdr.txt", "IB", "infiniband", None, True),
        ("derived_azure_socket_fallback.txt", "Socket", "socket", None, False),
        ("derived_aws_efa.txt", "AWS Libfabric", "efa", "efa", True),
        ("derived_aws_ofi_tcp.txt", "AWS Libfabric", "socket", "tcp;ofi_rxm", False),
    ],
)
def test_the_parser_names_the_network_each_host_used(sample, name, kind, provider, gdr) -> None:
    (net,) = run_of(sample).networks
    assert (net.name, net.kind, net.provider, net.gdr) == (name, kind, provider, gdr)
    assert len(net.hosts) == 2


def test_ib_devices_and_driver_are_read() -> None:
    run = run_of("derived_azure_ib_gdr.txt")
    assert run.networks[0].devices == tuple(f"mlx5_ib{i}:1" for i in range(8))
    assert run.cuda_driver == "12080"
    assert "8 devices; GPUDirect RDMA" in run.networks[0].describe()


def test_a_log_without_info_lines_names_no_network() -> None:
    assert run_of("nccl_tests_issue309_h100_2node.txt").networks == ()


@pytest.mark.parametrize(
    ("lines", "name"),
    [
        # NCCL 2.4 (NVIDIA/nccl issue 352): no `Using network` line, the transport's own says it
        (["ds-ml-01-0:17754:17754 [0] NCCL INFO NET/IB : No device found.",
          "ds-ml-01-0:17754:17754 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>"], "Socket"),
        # the SHARP plugin's network (NVIDIA/nccl-tests issue 294)
        (["h100-4:739790:739878 [4] NCCL INFO Using network IBext_v6"], "IBext_v6"),
        # under Open MPI's --tag-output prefix
        (["[1,3]<stdout>:node-1:42:42 [3] NCCL INFO Using network IB"], "IB"),
    ],
)  # fmt: skip
def test_older_and_plugin_spellings(lines, name) -> None:
    from clusterctl.nccl.parse import strip_prefixes

    (net,) = networks_in(strip_prefixes(line)[0] for line in lines)
    assert net.name == name
    assert net.kind == ("socket" if name == "Socket" else "infiniband")


def test_a_socket_fallback_on_a_fabric_sku_fails_for_that_reason() -> None:
    v = judge(run_of("derived_azure_socket_fallback.txt"), FLOOR, fabric="infiniband", nodes=2)
    assert v.status == "fail"
    (reason,) = v.reasons
    assert reason.startswith("NCCL fell back to NET/Socket")
    assert "InfiniBand" in reason and "below the floor" not in reason
    # the low figure is still there, as a consequence
    assert any("below the floor" in f.message and f.level == "info" for f in v.findings)


def test_an_ofi_tcp_provider_is_a_fallback_from_efa() -> None:
    v = judge(run_of("derived_aws_ofi_tcp.txt"), FLOOR, fabric="efa", nodes=2)
    assert v.status == "fail"
    assert v.reasons[0].startswith("NCCL fell back to NET/AWS Libfabric (provider tcp;ofi_rxm")


@pytest.mark.parametrize(
    ("sample", "fabric"),
    [("derived_azure_ib_gdr.txt", "infiniband"), ("derived_aws_efa.txt", "efa")],
)
def test_the_fabric_carrying_the_traffic_passes_and_is_said(sample, fabric) -> None:
    v = judge(run_of(sample), FLOOR, fabric=fabric, nodes=2)
    assert v.status == "pass"
    assert any(f.kind == "fabric" and f.message.startswith("NCCL used") for f in v.findings)


def test_without_info_lines_the_verdict_says_how_to_prove_the_fabric() -> None:
    v = judge(run_of("nccl_tests_issue309_h100_2node.txt"), FLOOR, fabric="infiniband", nodes=2)
    assert v.status == "pass"
    (note,) = [f for f in v.findings if f.kind == "fabric"]
    assert note.level == "info" and "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET" in note.message


def test_one_node_has_no_network_to_prove() -> None:
    from dataclasses import replace

    run = replace(run_of("derived_azure_socket_fallback.txt"), ranks=())
    v = judge(run, Thresholds(1.0, None, 16 << 30, "t"), fabric="infiniband", nodes=1)
    assert not [f for f in v.findings if f.kind == "fabric"]


def test_junit_and_json_carry_the_fallback() -> None:
    from clusterctl.nccl.report import to_json, to_junit

    v = judge(run_of("derived_azure_socket_fallback.txt"), FLOOR, fabric="infiniband", nodes=2)
    xml = to_junit([v])
    # the hosts' networks are known, so the fabric is a testcase of its own
    assert '<failure message="NCCL fell back to NET/Socket' in xml and 'type="fabric"' in xml
    (group,) = to_json([v])["groups"]
    assert group["networks"] == [
        {"name": "Socket", "kind": "socket", "hosts": ["bm-h100-01", "bm-h100-02"],
         "devices": ["eth0"], "provider": None, "gdr": False},
    ]  # fmt: skip
