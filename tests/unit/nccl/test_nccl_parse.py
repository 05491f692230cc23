from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl.nccl.parse import NcclParseError, parse_all_reduce

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl"


def load(name: str) -> str:
    return (DATA / name).read_text()


def test_current_layout_with_mpi_noise_and_rank_lines() -> None:
    run = parse_all_reduce(load("nccl_tests_issue309_h100_2node.txt"))
    assert run.layout == "current"
    assert len(run.rows) == 32
    assert run.rows[0].size_bytes == 8
    last = run.rows[-1]
    assert (last.size_bytes, last.count, last.dtype, last.redop, last.root) == (
        17179869184,
        4294967296,
        "float",
        "sum",
        -1,
    )
    assert last.out_of_place.time_us == 68652.0
    assert last.out_of_place.busbw_gbps == 469.21
    assert last.in_place.busbw_gbps == 469.10
    assert last.in_place.wrong == 0 and last.in_place.error is None
    assert run.n_ranks == 16
    assert run.hosts == ("bm-h100-01", "bm-h100-02")
    assert run.gpus_per_host == {"bm-h100-01": 8, "bm-h100-02": 8}
    assert run.gpu_names == ("NVIDIA H100 80GB HBM3",)
    assert run.ranks[9].device == 1 and run.ranks[9].bus_id == "0000:3b:00"
    assert (run.n_threads, run.n_gpus, run.min_bytes, run.max_bytes) == (1, 1, 8, 17179869184)
    assert run.validation is True
    assert run.nccl_version == "2.26.2+cuda12.8"
    assert run.avg_busbw_gbps == 139.56
    assert run.oob_count == 0 and not run.oob_failed
    assert run.concluded is False  # this release printed no "concluded" line


def test_version_starting_and_concluded_lines() -> None:
    run = parse_all_reduce(load("nccl_issue2441_h100nvl_v2183_small.txt"))
    assert run.tests_version == "2.18.3"
    assert run.concluded
    assert run.hosts == ("gpu-0001", "gpu-0003")
    assert run.gpus_per_host == {"gpu-0001": 2, "gpu-0003": 2}
    assert [r.size_bytes for r in run.rows][:3] == [500000, 600000, 700000]
    assert run.max_size_bytes == 1500000


def test_na_wrong_column_means_unchecked() -> None:
    run = parse_all_reduce(load("aks_rdma_ib_a100_2node_na.txt"))
    assert len(run.rows) == 16
    assert all(r.out_of_place.wrong is None and r.in_place.wrong is None for r in run.rows)
    assert not run.checked
    assert run.rows[-1].out_of_place.busbw_gbps == 187.22
    assert run.ranks == ()


def test_mpi_output_prefix_is_stripped() -> None:
    run = parse_all_reduce(load("awsome_aws_batch_p5_mpi_prefix.txt"))
    assert len(run.rows) == 32
    assert run.rows[-1].size_bytes == 17179869184
    assert run.rows[-1].in_place.busbw_gbps == 483.35
    assert run.avg_busbw_gbps == 156.742


def test_legacy_layout_error_column_no_root() -> None:
    run = parse_all_reduce(load("wohlbier_dgx2_v100_old_error.txt"))
    assert run.layout == "legacy"
    assert run.side_columns[3] == "error"
    assert len(run.rows) == 31
    row = run.rows[-1]
    assert row.root is None
    assert row.out_of_place.error == pytest.approx(2e-07)
    assert row.out_of_place.wrong is None
    assert row.in_place.busbw_gbps == 123.57
    assert run.gpus_per_host == {"seville": 12}
    assert run.ranks[0].group is None  # old rank lines have no Group field


def test_cputime_and_timestamp_columns() -> None:
    run = parse_all_reduce(load("derived_cputime_timestamp.txt"))
    assert run.time_label == "cputime"
    assert [r.size_bytes for r in run.rows] == [1 << 30, 1 << 31, 1 << 32]
    assert run.rows[0].timestamp == "2025-05-22 07:36:17"
    assert run.rows[2].out_of_place.time_us == 17262.0


def test_per_iteration_extra_columns() -> None:
    run = parse_all_reduce(load("derived_per_iter.txt"))
    row = run.rows[0]
    assert run.side_columns == (
        "time",
        "algbw",
        "busbw",
        "#wrong",
        "i_min",
        "i_max",
        "i_p99",
        "i_cv%",
    )
    assert row.in_place.busbw_gbps == 450.37
    assert dict(row.out_of_place.extras)["i_cv%"] == 1.25
    assert dict(row.in_place.extras)["i_min"] == 4380.8


def test_wrong_elements_and_oob_failed_are_parsed() -> None:
    run = parse_all_reduce(load("derived_wrong_oob_failed.txt"))
    assert run.oob_failed and run.oob_count == 1
    bad = [r for r in run.rows if r.in_place.wrong]
    assert [(r.size_bytes, r.in_place.wrong) for r in bad] == [(4294967296, 12)]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("derived_truncated_no_footer.txt", "truncated"),
        ("derived_cut_row.txt", "fields"),
        ("derived_garbage.txt", "no all_reduce_perf result rows"),
        ("derived_sizes_out_of_order.txt", "not increasing"),
        ("derived_not_concluded.txt", "concluded"),
    ],
)
def test_damaged_outputs_are_refused(name: str, message: str) -> None:
    with pytest.raises(NcclParseError, match=message):
        parse_all_reduce(load(name))


def test_error_names_the_line() -> None:
    with pytest.raises(NcclParseError) as info:
        parse_all_reduce(load("derived_cut_row.txt"))
    assert info.value.line_no == 60
    assert str(info.value).startswith("line 60:")


def test_out_of_order_error_names_the_row_line() -> None:
    with pytest.raises(NcclParseError) as info:
        parse_all_reduce(load("derived_sizes_out_of_order.txt"))
    assert info.value.line_no == 65  # the 1 GiB row that follows 2 GiB


HEADER = (
    "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
    "# (B) (elements) (us) (GB/s) (GB/s) (us) (GB/s) (GB/s)\n"
)
FOOTER = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.5\n"


def row(size: int, busbw: str = "1.00", wrong: str = "0") -> str:
    side = f"10.0  1.00  {busbw}  {wrong}"
    return f"{size:12d}  {size // 4:12d}  float  sum  -1  {side}  {side}\n"


def test_nccl_info_lines_between_rows_are_ignored() -> None:
    text = (
        HEADER
        + row(8)
        + "node-1:1234:1250 [0] NCCL INFO Channel 00/02 : 0 1\n"
        + "srun: Job step 12.0 aborted? no\n"
        + row(16)
        + FOOTER
    )
    run = parse_all_reduce(text)
    assert [r.size_bytes for r in run.rows] == [8, 16]


def test_rows_without_header_are_inferred_from_width() -> None:
    run = parse_all_reduce(row(8) + row(16) + FOOTER)
    assert run.layout == "current" and len(run.rows) == 2


def test_wrong_count_in_g_format_is_read_as_int() -> None:
    run = parse_all_reduce(HEADER + row(8, wrong="1e+06") + FOOTER)
    assert run.rows[0].out_of_place.wrong == 1_000_000


def test_non_numeric_busbw_is_garbage() -> None:
    with pytest.raises(NcclParseError, match="busbw is not a number"):
        parse_all_reduce(HEADER + row(8, busbw="abc") + FOOTER)


def test_repeated_zero_byte_rows_are_allowed_but_repeated_sizes_are_not() -> None:
    assert len(parse_all_reduce(HEADER + row(0) + row(0) + row(8) + FOOTER).rows) == 3
    with pytest.raises(NcclParseError, match="not increasing"):
        parse_all_reduce(HEADER + row(8) + row(8) + FOOTER)


def test_new_sweep_per_redop_is_not_out_of_order() -> None:
    text = HEADER + row(8) + row(16) + row(8).replace(" sum ", " max ") + FOOTER
    assert [r.redop for r in parse_all_reduce(text).rows] == ["sum", "sum", "max"]


def test_second_table_is_refused() -> None:
    with pytest.raises(NcclParseError, match="one run at a time"):
        parse_all_reduce(HEADER + row(8) + FOOTER + HEADER + row(8) + FOOTER)


def test_other_collective_is_refused() -> None:
    with pytest.raises(NcclParseError, match="not all_reduce_perf"):
        parse_all_reduce("# Collective test starting: all_gather_perf\n" + HEADER + row(8) + FOOTER)


def test_table_without_redop_is_refused() -> None:
    header = "# size count type time algbw busbw error time algbw busbw error\n"
    with pytest.raises(NcclParseError, match="redop"):
        parse_all_reduce(header + "8 2 float 1.0 0.0 0.0 0e+00 1.0 0.0 0.0 0e+00\n" + FOOTER)


def test_empty_text_is_refused() -> None:
    with pytest.raises(NcclParseError):
        parse_all_reduce("")
