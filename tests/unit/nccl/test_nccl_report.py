from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from rich.console import Console
from rich.table import Table

from clusterctl.cli.report import nccl_table
from clusterctl.nccl.judge import Thresholds, Verdict, judge
from clusterctl.nccl.parse import parse_all_reduce
from clusterctl.nccl.report import render_plain, to_json, to_junit

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl"
GIB = 1 << 30


def verdicts() -> list[Verdict]:
    def load(name: str):
        return parse_all_reduce((DATA / name).read_text())

    h100 = Thresholds(460.0, 470.0, 16 * GIB, "AzNHC nd96isr_h100_v5")
    return [
        judge(load("nccl_tests_issue309_h100_2node.txt"), Thresholds(440.0, None, 4 * GIB, "x"),
              group="gpu-a"),
        judge(load("derived_wrong_oob_failed.txt"), h100, group="gpu-b"),
        judge(load("nccl_issue2441_h100nvl_v2183_small.txt"), h100, group="debug"),
    ]  # fmt: skip


def test_plain_table_groups_by_partition_and_size() -> None:
    text = render_plain(verdicts())
    assert isinstance(text, str)
    lines = text.splitlines()
    assert lines[0].split() == ["group", "size", "busbw", "oop", "busbw", "ip", "floor", "margin",
                                "status"]  # fmt: skip
    gpu_a = [line.split() for line in lines if line.startswith("gpu-a")]
    assert [row[1:3] for row in gpu_a] == [["4", "GiB"], ["8", "GiB"], ["16", "GiB"]]
    assert gpu_a[0][-1] == "pass" and gpu_a[0][-2] == "+5.9%"  # worst side 465.91 vs 440
    assert any(line.startswith("gpu-b") and line.endswith("fail") for line in lines)
    assert any(line.startswith("debug") and "1500000 B" in line for line in lines)
    assert "gpu-b: 12 wrong elements at 4 GiB (in-place)" in text
    assert lines[-1] == "overall: fail"


def test_all_sizes_lists_every_row() -> None:
    text = render_plain(verdicts()[:1], all_sizes=True)
    assert isinstance(text, str)
    assert sum(line.startswith("gpu-a") for line in text.splitlines()) == 32


def test_rich_table_renders() -> None:
    table = nccl_table(verdicts())
    assert isinstance(table, Table)
    assert table.row_count == 3 + 1 + 1  # gpu-a: 3 gated sizes; gpu-b: 16 GiB; debug: last size
    console = Console(record=True, width=140)
    console.print(table)
    out = console.export_text()
    assert "gpu-b" in out and "inconclusive" in out


def test_json_is_serialisable_and_complete() -> None:
    doc = to_json(verdicts())
    assert json.loads(json.dumps(doc)) == doc
    assert doc["status"] == "fail"
    groups = {g["group"]: g for g in doc["groups"]}
    assert groups["gpu-a"]["status"] == "pass"
    assert groups["gpu-a"]["measured_busbw_gbps"] == 465.91
    assert groups["gpu-a"]["hosts"] == ["bm-h100-01", "bm-h100-02"]
    assert sum(s["gated"] for s in groups["gpu-a"]["sizes"]) == 3
    assert groups["gpu-b"]["thresholds"]["source"] == "AzNHC nd96isr_h100_v5"
    assert groups["debug"]["status"] == "inconclusive"
    assert groups["debug"]["measured_busbw_gbps"] is None


def test_junit_parses_and_counts_failures() -> None:
    xml = to_junit(verdicts())
    root = ET.fromstring(xml.split("?>", 1)[1])
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 6 == int(suite.get("tests"))
    failed = [c for c in cases if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failed] == [
        ("nccl.all_reduce.gpu-b", "correctness")
    ]
    assert int(suite.get("failures")) == 1 == int(root.get("failures"))
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert [(c.get("classname"), c.get("name")) for c in skipped] == [
        ("nccl.all_reduce.debug", "bandwidth")
    ]
    assert suite.get("skipped") == "1"


def test_junit_bandwidth_failure() -> None:
    run = parse_all_reduce((DATA / "nccl_tests_issue309_h100_2node.txt").read_text())
    xml = to_junit([judge(run, Thresholds(500.0, None, 16 * GIB, "too high"))])
    suite = ET.fromstring(xml.split("?>", 1)[1]).find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    failure = suite.find("testcase[@name='bandwidth']/failure")
    assert failure is not None and "below the floor 500" in failure.get("message", "")
