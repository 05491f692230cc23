from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl.nccl.emit import format_all_reduce, ranks_for_hosts, row_from_times
from clusterctl.nccl.judge import Thresholds, judge
from clusterctl.nccl.parse import parse_all_reduce

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl"


def test_round_trip_of_a_real_run() -> None:
    original = parse_all_reduce((DATA / "nccl_tests_issue309_h100_2node.txt").read_text())
    text = format_all_reduce(original.rows, ranks=original.ranks)
    again = parse_all_reduce(text)
    assert again.concluded and again.layout == "current"
    assert again.ranks == original.ranks
    assert [r.size_bytes for r in again.rows] == [r.size_bytes for r in original.rows]
    for a, b in zip(again.rows, original.rows, strict=True):
        assert a.out_of_place.busbw_gbps == b.out_of_place.busbw_gbps
        assert a.in_place.time_us == b.in_place.time_us
        assert a.in_place.wrong == b.in_place.wrong == 0
    assert again.avg_busbw_gbps == pytest.approx(
        sum(m.busbw_gbps for r in original.rows for m in (r.out_of_place, r.in_place)) / 64,
        rel=1e-5,
    )


def test_probe_rows_round_trip_with_hosts() -> None:
    hosts = ["sbx-node-1", "sbx-node-2", "sbx-node-3"]

    def t_us(e: int) -> float:
        return 10.0 + (1 << e) / 21_000  # ~21 GB/s algbw for large messages

    rows = [row_from_times(1 << e, t_us(e), t_us(e) - 1, n_ranks=3) for e in range(10, 31, 4)]
    text = format_all_reduce(rows, hosts=hosts, gpus_per_host=1, gpu_name="tcp-probe")
    run = parse_all_reduce(text)
    assert run.hosts == tuple(hosts)
    assert run.gpus_per_host == dict.fromkeys(hosts, 1)
    assert run.gpu_names == ("tcp-probe",)
    assert run.max_bytes == 1 << 30 and run.validation
    last = run.rows[-1]
    # algbw = bytes / time; busbw = algbw * 2(n-1)/n with n = 3; printed with two decimals
    algbw = (1 << 30) / (t_us(30) * 1e3)
    assert last.out_of_place.algbw_gbps == round(algbw, 2)
    assert last.out_of_place.busbw_gbps == round(algbw * 4 / 3, 2)
    assert last.out_of_place.time_us == round(t_us(30), 1)  # "51140.6" fits %7.1f
    assert judge(run, Thresholds(20.0, None, 1 << 30, "sandbox")).status == "pass"


def test_wrong_elements_are_written_and_fail_the_run() -> None:
    rows = [row_from_times(1 << 20, 10.0, 10.0, n_ranks=2),
            row_from_times(1 << 30, 1e4, 1e4, n_ranks=2, wrong=3)]  # fmt: skip
    run = parse_all_reduce(format_all_reduce(rows, hosts=["a", "b"]))
    assert run.oob_failed and run.oob_count == 6
    assert run.rows[1].in_place.wrong == 3
    assert judge(run, Thresholds(1.0, None, 1 << 30, "x")).status == "fail"


def test_unchecked_rows_are_written_as_na() -> None:
    rows = [row_from_times(1 << 30, 1e4, 1e4, n_ranks=2, wrong=None)]
    text = format_all_reduce(rows, hosts=["a", "b"])
    assert "N/A" in text
    run = parse_all_reduce(text)
    assert not run.checked and run.validation is False


def test_wide_numbers_keep_their_column() -> None:
    # time >= 1e7 us no longer fits "%7.0f": nccl-tests falls back to "%7.1e"
    rows = [row_from_times(1 << 34, 2.5e7, 2.5e7, n_ranks=2)]
    text = format_all_reduce(rows, ranks=ranks_for_hosts(["a", "b"]))
    assert "2.5e+07" in text
    assert parse_all_reduce(text).rows[0].out_of_place.time_us == 2.5e7


def test_nothing_to_write() -> None:
    with pytest.raises(ValueError):
        format_all_reduce([], hosts=["a"])
