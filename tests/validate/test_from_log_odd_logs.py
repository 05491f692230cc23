"""NCCL logs that used to be judged wrong: `validate --nccl --from-log` on logs that are not what a
plain all_reduce_perf table looks like. Each class must be judged right or refused with one line
(exit 2), never passed by mistake. Samples: tests/data/nccl/SOURCES.md (derive_odd_logs.py makes
the derived_* ones)."""

from __future__ import annotations

import json

import pytest

from tests.validate.conftest import DATA

H100_2 = ("--sku", "Standard_ND96isr_H100_v5", "--nodes", "2")
A100_2 = ("--sku", "Standard_ND96asr_v4", "--nodes", "2")
DGX2 = ("--nodes", "1", "--fail-below", "20")


def run(cli, name: str, *args: str):
    return cli("--nccl", "--from-log", str(DATA / name), *args)


def one_error_line(res) -> str:
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), res.output
    return lines[0]


# --- class 1: a collective other than all_reduce is never judged as one ----------------------


@pytest.mark.parametrize(
    ("sample", "args", "needle"),
    [
        # current layout, no program name anywhere: per-rank counts and (n-1)/n busbw
        ("derived_reduce_scatter_unnamed.txt", H100_2, "per rank"),
        ("derived_all_gather_unnamed.txt", H100_2, "redop 'none'"),
        ("derived_broadcast_unnamed.txt", H100_2, "redop 'none'"),
        ("derived_reduce_unnamed.txt", H100_2, "root 0"),
        ("derived_sendrecv_unnamed.txt", H100_2, "redop 'none'"),
        ("derived_reduce_scatter_no_ranks.txt", A100_2, "per rank"),
        # the program is named on a command line / argv echo
        ("derived_all_gather_argv.txt", H100_2, "all_gather_perf"),
        ("derived_reduce_scatter_argv_all_reduce.txt", H100_2, "all_reduce_perf"),
        ("derived_concluded_other.txt", H100_2, "alltoall_perf"),
        # nccl-tests of 2019 (genuine), with and without the `Running:` line
        ("wohlbier_dgx2_v100_reduce_scatter.txt", DGX2, "reduce_scatter_perf"),
        ("derived_legacy_reduce_scatter_unnamed.txt", DGX2, "per rank"),
        ("wohlbier_dgx2_v100_reduce.txt", DGX2, "reduce_perf"),
        ("derived_legacy_reduce_unnamed.txt", DGX2, "root 0"),
        ("wohlbier_dgx2_v100_all_gather.txt", DGX2, "all_gather_perf"),
        ("derived_legacy_all_gather_unnamed.txt", DGX2, "redop"),
        ("wohlbier_dgx2_v100_broadcast.txt", DGX2, "broadcast_perf"),
        ("derived_legacy_broadcast_unnamed.txt", DGX2, "redop"),
    ],
)
def test_other_collectives_are_refused_not_judged(cli, sample, args, needle) -> None:
    res = run(cli, sample, *args)
    assert res.exit_code == 2, res.output
    line = one_error_line(res)
    assert needle in line and "all_reduce" in line, line


# --- class 2: launcher prefixes and repeated output -------------------------------------------


@pytest.mark.parametrize(
    "sample",
    [
        "derived_hydra_prepend_rank.txt",  # MPICH/Hydra -prepend-rank: `[0] `
        "derived_hydra_two_ranks.txt",  # the same output from ranks 0 and 1, interleaved
        "derived_ompi_timestamp_tag.txt",  # Open MPI --timestamp-output --tag-output
        "derived_iso_host_pid.txt",  # kubectl --timestamps, then `[host:pid] `
    ],
)
def test_launcher_prefixes_are_stripped(cli, sample) -> None:
    res = run(cli, sample, *H100_2, "--json")
    assert res.exit_code == 0, res.output
    group = json.loads(res.stdout)["groups"][0]
    assert group["status"] == "pass"
    assert group["n_ranks"] == 16 and group["hosts"] == ["bm-h100-01", "bm-h100-02"]
    assert group["measured_busbw_gbps"] == 469.1


def test_separate_runs_per_process_are_refused(cli) -> None:
    # nccl-tests built without MPI: every process ran its own 1-rank test
    res = run(cli, "derived_separate_runs.txt", *H100_2)
    assert res.exit_code == 3, res.output  # inconclusive: no one run to judge
    assert "differ" in one_error_line(res)


# --- class 3: fewer ranks than nodes x GPUs ---------------------------------------------------


def test_missing_gpu_fails_and_names_the_host(cli) -> None:
    res = run(cli, "derived_missing_gpu.txt", *H100_2, "--json")
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    assert data["status"] == "fail"
    reasons = [f["message"] for g in data["groups"] for f in g["findings"] if f["level"] == "fail"]
    short = [r for r in reasons if "bm-h100-02" in r]
    assert short and "7 of 8" in short[0] and "device 7" in short[0], reasons
    assert not any("bm-h100-01" in r for r in reasons)


def test_missing_gpu_without_sku_is_uneven(cli) -> None:
    res = run(cli, "derived_missing_gpu.txt", "--nodes", "2", "--fail-below", "300")
    assert res.exit_code == 1, res.output
    assert "bm-h100-02" in res.stdout


def test_missing_gpu_without_rank_lines_is_seen_in_the_busbw_ratio(cli) -> None:
    res = run(cli, "derived_missing_gpu_no_ranks.txt", *A100_2, "--json")
    assert res.exit_code == 1, res.output
    reasons = [f["message"] for g in json.loads(res.stdout)["groups"] for f in g["findings"]]
    assert any("15 ranks" in r and "16" in r for r in reasons), reasons


def test_full_run_without_rank_lines_passes_the_rank_check(cli) -> None:
    res = run(cli, "aks_rdma_ib_a100_2node_na.txt", *A100_2, "--json")
    assert res.exit_code == 0, res.output


def test_repeated_rank_line_is_counted_once(cli) -> None:
    res = run(cli, "derived_rank_line_repeated.txt", *H100_2, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["groups"][0]["n_ranks"] == 16


# --- more of the same kind ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "needle"),
    [
        ("derived_no_avg_line.txt", "Avg bus bandwidth"),
        ("derived_mbps_units.txt", "MB/s"),
    ],
)
def test_damaged_footer_and_units_are_refused(cli, sample, needle) -> None:
    res = run(cli, sample, *H100_2)
    assert res.exit_code == 3, res.output  # inconclusive: the log proves nothing
    assert needle in one_error_line(res)
