"""How the ranks of a run are held against nodes x GPUs (clusterctl.nccl.judge): without `# Rank`
lines or a bandwidth ratio the count is not checked (a warning); with no GPU count, a host with
fewer ranks than the others is named against the others."""

from __future__ import annotations

from clusterctl.nccl.judge import _ranks
from clusterctl.nccl.model import NcclRun, RankInfo


def _on(host: str, devices: range, first: int) -> list[RankInfo]:
    return [RankInfo(first + i, host, d, "H100") for i, d in enumerate(devices)]


def test_no_rank_lines_and_no_rows_leave_the_count_unchecked_with_a_warning() -> None:
    (note,) = _ranks(NcclRun(rows=()), gpus_per_host=8, nodes=2)
    assert (note.level, note.kind) == ("warn", "coverage")
    assert note.message.startswith("rank count not checked against 16 (2 x 8 GPUs)")


def test_no_rank_lines_and_nothing_expected_say_nothing() -> None:
    assert _ranks(NcclRun(rows=()), gpus_per_host=None, nodes=2) == []


def test_without_a_gpu_count_a_short_host_is_named_against_the_others() -> None:
    ranks = (*_on("a", range(4), 0), *_on("b", range(2), 4))
    (note,) = _ranks(NcclRun(rows=(), ranks=ranks), gpus_per_host=None, nodes=2)
    assert note.level == "fail"
    assert note.message == (
        "b ran 2 ranks, others 4 (device 2, 3 missing), ranks 4, 5: 6 ranks in all"
    )


def test_a_host_with_more_ranks_than_gpus_is_named() -> None:
    ranks = (*_on("a", range(8), 0), *_on("b", range(8), 8), *_on("b", range(8, 9), 16))
    notes = _ranks(NcclRun(rows=(), ranks=ranks), gpus_per_host=8, nodes=2)
    assert [n.message for n in notes] == ["b ran 9 ranks on a 8-GPU node"]
