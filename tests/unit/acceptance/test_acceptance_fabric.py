"""The acceptance report, the history and the terminal show each host's fabric and the expected
figure, for logs judged through `validate --nccl --from-log`."""

from __future__ import annotations

import re
from pathlib import Path

from clusterctl.acceptance.page import Context, html
from clusterctl.validate.history import History
from clusterctl.validate.run import Options, validate_log
from clusterctl.validate.targets import LogTarget

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl"
H100 = "Standard_ND96isr_H100_v5"
CTX = Context(generated_at="2026-11-28T06:00:00+00:00", target="log x.txt", invocation="clusterctl")


def outcome(sample: str, sku: str = H100):
    return validate_log(LogTarget(DATA / sample, sku, None), Options())


def text_of(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_the_page_names_the_host_and_device_first_and_lists_each_hosts_fabric() -> None:
    page = html(outcome("derived_h100_7_of_8_ib.txt"), CTX)
    header = re.search(r'<header id="verdict"[^>]*>(.*?)</header>', page, re.S)
    assert header is not None
    first = re.search(r'<li class="(\w+)">([^<]*)</li>', header.group(1))
    assert first and first.group(1) == "fail"
    assert first.group(2).startswith("h100-1: 7 of 8 IB devices, mlx5_ib5 missing")
    body = text_of(page)
    assert "fabric h100-0 IB, mlx5_ib0..7 (8 IB devices), GPUDirect RDMA (16/16 channels)" in body
    assert "fabric h100-1 IB, mlx5_ib0, mlx5_ib1, mlx5_ib2, mlx5_ib3, mlx5_ib4, mlx5_ib6" in body
    assert "fabric expected 8 IB devices per host with GPUDirect RDMA" in body
    assert "expected 384 GB/s (derived) at 16 GiB, measured 338.00 (-12.0%)" in body


def test_history_keeps_each_hosts_fabric_the_expected_figure_and_the_reasons(tmp_path) -> None:
    h = History(tmp_path / "h.sqlite")
    h.record_outcome("s", outcome("derived_p5_31_nics.txt", "p5.48xlarge"), at="t", source="run")
    (run,) = h.runs("s")
    assert run.fabric == "ip-10-1-18-77 32 EFA GDR; ip-10-1-45-213 31 EFA GDR"
    assert run.expected_gbps == 366.0
    assert run.reasons[0].startswith("ip-10-1-45-213: 31 of 32 EFA NICs")
