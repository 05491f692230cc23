from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl.nccl.emit import row_from_times
from clusterctl.nccl.judge import SuspectPair, Thresholds, judge, judge_peers, overall_status
from clusterctl.nccl.parse import Measurement, NcclRow, NcclRun, parse_all_reduce

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl"
GIB = 1 << 30
H100_NODE = Thresholds(460.0, None, 16 * GIB, "AzNHC conf/nd96isr_h100_v5.conf")
H100_2NODE = Thresholds(400.0, 440.0, 2 * GIB, "test baseline")


def load(name: str) -> NcclRun:
    return parse_all_reduce((DATA / name).read_text())


def run_with(
    sizes_busbw: dict[int, float], *, wrong: int | None = 0, error: float | None = None
) -> NcclRun:
    rows = tuple(
        NcclRow(
            size_bytes=size,
            count=size // 4,
            dtype="float",
            redop="sum",
            root=-1,
            out_of_place=Measurement(1.0, bw / 2, bw, wrong=wrong, error=error),
            in_place=Measurement(1.0, bw / 2, bw, wrong=wrong, error=error),
        )
        for size, bw in sorted(sizes_busbw.items())
    )
    return NcclRun(rows=rows)


# --- genuine samples ---------------------------------------------------------------------------


def test_healthy_h100_pair_passes_at_16g_and_ignores_avg_busbw() -> None:
    run = load("nccl_tests_issue309_h100_2node.txt")
    assert run.avg_busbw_gbps == 139.56  # far below any floor: must not matter
    v = judge(run, H100_NODE)
    assert v.status == "pass"
    assert v.gated_sizes == (16 * GIB,)
    assert v.measured_busbw_gbps == 469.10  # worse of out-of-place 469.21 / in-place 469.10
    assert v.margin_pct == pytest.approx((469.10 - 460) / 460 * 100)


def test_gating_at_1g_takes_the_worst_size_and_side() -> None:
    run = load("nccl_tests_issue309_h100_2node.txt")
    v = judge(run, Thresholds(440.0, None, GIB, "x"))
    assert v.gated_sizes == tuple(GIB << i for i in range(5))
    assert v.measured_busbw_gbps == 448.90  # 1 GiB out-of-place
    assert v.status == "pass"
    assert judge(run, Thresholds(449.0, None, GIB, "x")).status == "fail"


def test_aks_sample_with_checks_off_warns_about_correctness() -> None:
    v = judge(load("aks_rdma_ib_a100_2node_na.txt"), Thresholds(180.0, None, 8 * GIB, "aks doc"))
    assert v.status == "warn"
    assert v.measured_busbw_gbps == 187.05
    assert any("-c 0" in r for r in v.reasons)


def test_wrong_elements_and_oob_failed_fail_even_with_good_bandwidth() -> None:
    v = judge(load("derived_wrong_oob_failed.txt"), H100_NODE)
    assert v.status == "fail"
    kinds = [(f.level, f.kind) for f in v.findings]
    assert kinds.count(("fail", "correctness")) == 2
    assert any("12 wrong elements at 4 GiB (in-place)" in r for r in v.reasons)
    assert any("Out of bounds values: 1 FAILED" in r for r in v.reasons)


def test_legacy_error_above_tolerance_fails() -> None:
    baseline = Thresholds(120.0, None, 8 * GIB, "dgx-2")
    assert judge(load("wohlbier_dgx2_v100_old_error.txt"), baseline).status == "pass"
    v = judge(load("derived_legacy_error_high.txt"), baseline)
    assert v.status == "fail"
    assert any("error 0.4 above tolerance" in r for r in v.reasons)


def test_small_message_run_is_inconclusive_never_pass() -> None:
    v = judge(load("nccl_issue2441_h100nvl_v2183_small.txt"), Thresholds(5.0, None, GIB, "x"))
    assert v.status == "inconclusive"
    assert v.measured_busbw_gbps is None
    assert any("bandwidth not judged" in r for r in v.reasons)


# --- thresholds edges -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("busbw", "status"),
    [
        (400.0, "warn"),  # exactly at the floor: not below it
        (399.99, "fail"),
        (440.0, "pass"),  # exactly at the warning level
        (439.99, "warn"),
        (500.0, "pass"),
    ],
)
def test_floor_and_warning_edges(busbw: float, status: str) -> None:
    v = judge(run_with({GIB: 300.0, 2 * GIB: busbw}), H100_2NODE)
    assert v.status == status
    assert v.gated_sizes == (2 * GIB,)


def test_margin_is_zero_at_floor() -> None:
    v = judge(run_with({2 * GIB: 400.0}), H100_2NODE)
    assert v.margin_pct == 0.0


def test_numbers_compare_as_numbers_not_strings() -> None:
    # "1000" < "460" as strings; a string compare would fail this healthy figure.
    assert judge(run_with({16 * GIB: 1000.0}), H100_NODE).status == "pass"
    assert judge(run_with({16 * GIB: 99.0}), H100_NODE).status == "fail"


def test_run_shorter_than_baseline_size_above_the_floor_passes() -> None:
    # bus bandwidth only grows with size, so at or above the floor at 2 GiB is
    # at or above it at 16 GiB too: pass, saying where it was judged (it used to be `warn`).
    v = judge(run_with({GIB: 465.0, 2 * GIB: 470.0}), H100_NODE)
    assert v.status == "pass"
    assert v.gated_sizes == (GIB, 2 * GIB)
    assert any("stopped at 2 GiB" in f.message for f in v.findings)


def test_run_shorter_than_baseline_size_and_below_floor_is_inconclusive() -> None:
    v = judge(run_with({GIB: 448.0, 2 * GIB: 455.0}), H100_NODE)
    assert v.status == "inconclusive"
    assert v.measured_busbw_gbps == 448.0


def test_run_below_min_gate_is_inconclusive() -> None:
    v = judge(run_with({128 << 20: 900.0}), H100_NODE)
    assert v.status == "inconclusive" and v.measured_busbw_gbps is None


def test_baseline_below_min_gate_uses_its_own_size() -> None:
    v = judge(run_with({64 << 20: 10.0, 128 << 20: 300.0}), Thresholds(250.0, None, 128 << 20, "x"))
    assert v.status == "pass" and v.gated_sizes == (128 << 20,)


def test_min_gate_bytes_can_be_raised() -> None:
    v = judge(run_with({GIB: 470.0, 2 * GIB: 470.0}), H100_NODE, min_gate_bytes=4 * GIB)
    assert v.status == "inconclusive"


def test_wrong_zero_and_error_at_tolerance_are_fine() -> None:
    assert judge(run_with({2 * GIB: 450.0}, wrong=None, error=1e-3), H100_2NODE).status == "pass"
    assert judge(run_with({2 * GIB: 450.0}, wrong=None, error=1.1e-3), H100_2NODE).status == "fail"
    assert judge(run_with({2 * GIB: 450.0}, wrong=1), H100_2NODE).status == "fail"


def test_thresholds_validate() -> None:
    with pytest.raises(ValueError):
        Thresholds(400.0, 300.0, GIB, "warn below fail")
    with pytest.raises(ValueError):
        Thresholds(0.0, None, GIB, "zero floor")


def test_emitted_rows_judge_like_parsed_rows() -> None:
    row = row_from_times(2 * GIB, 10_000.0, 10_000.0, n_ranks=2)
    assert row.in_place.busbw_gbps == pytest.approx(2 * GIB / 1e7)
    v = judge(NcclRun(rows=(row,)), Thresholds(214.0, None, 2 * GIB, "x"))
    assert v.status == "pass"


def test_overall_status_orders_by_severity() -> None:
    ok = judge(run_with({2 * GIB: 450.0}), H100_2NODE)
    short = judge(run_with({8: 1.0}), H100_2NODE)
    bad = judge(run_with({2 * GIB: 1.0}), H100_2NODE)
    assert overall_status([ok]) == "pass"
    assert overall_status([ok, short]) == "inconclusive"
    assert overall_status([short, bad, ok]) == "fail"


# --- peers ------------------------------------------------------------------------------------


def test_judge_peers_flags_the_slow_pair() -> None:
    results = {("a", "b"): 450.0, ("c", "d"): 452.0, ("e", "f"): 448.0, ("g", "h"): 120.0}
    suspects = judge_peers(results)
    assert [s.pair for s in suspects] == [("g", "h")]
    assert suspects[0].peer_median_gbps == 450.0
    assert suspects[0].ratio == pytest.approx(120 / 450)


def test_judge_peers_edge_exactly_at_rel_floor() -> None:
    results = {("a", "b"): 100.0, ("c", "d"): 100.0, ("e", "f"): 80.0}
    assert judge_peers(results, rel_floor=0.8) == []
    results[("e", "f")] = 79.99
    assert [s.pair for s in judge_peers(results, rel_floor=0.8)] == [("e", "f")]


def test_judge_peers_by_default_takes_a_pair_at_seven_eighths_of_its_peers() -> None:
    # one rail of eight gone: 0.875 of the others; 0.8 let it through
    results = {("a", "b"): 380.0, ("c", "d"): 384.0, ("e", "f"): 376.0, ("g", "h"): 332.5}
    (s,) = judge_peers(results)
    assert s.pair == ("g", "h") and s.rel_floor == 0.9 and s.verdict == "unconfirmed"
    assert s.ratio == pytest.approx(0.875)


@pytest.mark.parametrize(
    ("rerun", "verdict"), [(None, "unconfirmed"), (341.5, "named"), (342.5, "recovered")]
)
def test_a_suspect_is_named_only_when_its_rerun_is_below_the_same_floor(rerun, verdict) -> None:
    s = SuspectPair(("a", "b"), 332.5, 380.0, 0.9, rerun)  # the floor: 0.9 x 380 = 342
    assert s.verdict == verdict
    assert s.rerun_ratio == (None if rerun is None else pytest.approx(rerun / 380))


def test_judge_peers_needs_peers_and_sorts_worst_first() -> None:
    assert judge_peers({("a", "b"): 1.0}) == []
    results = {("a", "b"): 400.0, ("c", "d"): 400.0, ("e", "f"): 400.0, ("g", "h"): 200.0,
               ("i", "j"): 100.0}  # fmt: skip
    assert [s.pair for s in judge_peers(results)] == [("i", "j"), ("g", "h")]


def test_without_a_curve_a_clearly_slow_short_run_fails() -> None:
    # 37% below the 16 GiB floor, flat from 1 to 8 GiB: clearly slow, not
    # `inconclusive`, even where no published curve covers the sizes measured
    flat = {GIB << i: 290.0 for i in range(4)}
    v = judge(run_with(flat), H100_NODE)
    assert v.status == "fail"
    assert any("more than 20% under it" in r for r in v.reasons)


def test_a_curve_sets_the_floor_at_each_smaller_size() -> None:
    th = Thresholds(460.0, None, 16 * GIB, "x", curve=((GIB, 0.97), (4 * GIB, 0.99)))
    v = judge(run_with({GIB: 447.0, 2 * GIB: 447.0, 4 * GIB: 456.0, 8 * GIB: 456.0}), th)
    assert [s.floor_gbps for s in v.sizes] == pytest.approx([446.2, 446.2, 455.4, 455.4])
    assert v.status == "pass"
    assert judge(run_with({GIB: 440.0, 8 * GIB: 470.0}), th).status == "fail"
