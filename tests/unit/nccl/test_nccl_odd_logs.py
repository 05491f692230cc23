"""Odd nccl-tests logs at the parser and judge: prefixes, rank lines, footers, the collective,
rank count."""

from __future__ import annotations

import pytest

from clusterctl.nccl.collective import identify, ranks_from_ratio
from clusterctl.nccl.judge import Thresholds, judge
from clusterctl.nccl.parse import NcclParseError, NotAllReduce, parse_all_reduce, strip_prefixes

HEADER = (
    "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
    "# (B) (elements) (us) (GB/s) (GB/s) (us) (GB/s) (GB/s)\n"
)
FOOTER = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.5\n"


def rank(n: int, host: str, device: int, bus: str = "") -> str:
    return (
        f"#  Rank {n:2d} Group  0 Pid {100 + n} on {host} device {device} [{bus or device}] GPU\n"
    )


def row(size: int, count: int, algbw: float, busbw: float, redop="sum", root=-1, dtype="float"):
    side = f"10.0 {algbw:.2f} {busbw:.2f} 0"
    return f"{size} {count} {dtype} {redop} {root} {side} {side}\n"


@pytest.mark.parametrize(
    ("raw", "line", "tags"),
    [
        ("[3] #  Rank  3 ...", "#  Rank  3 ...", ("3",)),
        ("[1,12]<stdout>:   8  2 float", "8  2 float", ("1,12",)),
        ("Thu May 22 07:36:00 2025[1,0]<stdout>:# x", "# x", ("1,0",)),
        ("Thu May 22 07:36:00 2025<stdout>:# x", "# x", ()),
        ("2025-05-22T07:36:00.5+02:00 [h1:42] 8 2", "8 2", ("h1:42",)),
        ("[2025-05-22 07:36:00] 12: # x", "# x", ("12",)),
        ("node-7: #  Rank 0", "#  Rank 0", ("node-7",)),
        ("NCCL version 2.26.2+cuda12.8", "NCCL version 2.26.2+cuda12.8", ()),
        ("host:1:2 [0] NCCL INFO x", "host:1:2 [0] NCCL INFO x", ()),
    ],
)
def test_strip_prefixes(raw, line, tags) -> None:
    assert strip_prefixes(raw) == (line, tags)


def test_chatter_after_a_stripped_prefix_is_not_a_row() -> None:
    text = "[h:1] 15 more processes have sent help message\n" + HEADER + row(8, 2, 1, 1) + FOOTER
    assert len(parse_all_reduce(text).rows) == 1


def test_out_of_bounds_count_with_ok_is_failed() -> None:
    text = HEADER + row(8, 2, 1, 1) + FOOTER.replace(": 0 OK", ": 3 OK")
    assert parse_all_reduce(text).oob_failed


def test_conflicting_and_skipped_rank_lines_are_refused() -> None:
    body = HEADER + row(8, 2, 1, 1) + FOOTER
    with pytest.raises(NcclParseError, match="listed twice"):
        parse_all_reduce(rank(0, "a", 0) + rank(0, "b", 0) + body)
    with pytest.raises(NcclParseError, match="skip rank"):
        parse_all_reduce(rank(0, "a", 0) + rank(2, "a", 2) + body)


def test_unknown_type_and_no_ratio_cannot_be_told() -> None:
    with pytest.raises(NotAllReduce, match="cannot tell"):
        parse_all_reduce(HEADER + row(8, 2, 0.0, 0.0, dtype="fp4") + FOOTER)


def test_several_programs_named_are_refused() -> None:
    text = "run all_reduce_perf then all_gather_perf\n" + HEADER + row(8, 2, 1, 1) + FOOTER
    with pytest.raises(NotAllReduce, match="several"):
        parse_all_reduce(text)


def test_ratio_alone_tells_reduce_scatter_with_unknown_type() -> None:
    ranks = "".join(rank(i, "a", i) for i in range(8))
    text = ranks + HEADER + row(1 << 30, 1 << 27, 100.0, 87.5, dtype="fp4") + FOOTER
    with pytest.raises(NotAllReduce, match="n-1"):
        parse_all_reduce(text)
    assert identify([], n_ranks=None, named=[("all_reduce", 1)]).all_reduce


def test_ranks_from_ratio() -> None:
    run = parse_all_reduce(HEADER + row(1 << 30, 1 << 28, 100.0, 186.67) + FOOTER)
    assert ranks_from_ratio(run.rows) == 15


TH = Thresholds(10.0, None, 1 << 30, "t")


def test_two_ranks_on_one_gpu_fail() -> None:
    text = rank(0, "a", 0, "0000:02:00") + rank(1, "a", 0, "0000:02:00")
    run = parse_all_reduce(text + HEADER + row(1 << 30, 1 << 28, 50.0, 50.0) + FOOTER)
    v = judge(run, TH)
    assert v.status == "fail" and any("share one GPU on a" in r for r in v.reasons)


def test_device_zero_everywhere_with_distinct_buses_is_fine() -> None:
    # srun --gpus-per-task=1: every rank sees its GPU as device 0
    text = "".join(rank(i, "a", 0, f"0000:0{i}:00") for i in range(2))
    run = parse_all_reduce(text + HEADER + row(1 << 30, 1 << 28, 50.0, 50.0) + FOOTER)
    assert judge(run, TH, gpus_per_host=2, nodes=1).status == "pass"
