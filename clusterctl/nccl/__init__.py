"""NCCL all-reduce analysis: parse nccl-tests output, judge it, report it, localise bad nodes.

Pure functions over text and numbers; running the tests is someone else's job.
"""

from __future__ import annotations

from clusterctl.nccl.emit import format_all_reduce, ranks_for_hosts, row_from_times
from clusterctl.nccl.judge import (
    Finding,
    SizeFigure,
    SuspectPair,
    Thresholds,
    Verdict,
    judge,
    judge_peers,
    overall_status,
)
from clusterctl.nccl.localize import Localization, PairResult, Suspect, localize
from clusterctl.nccl.parse import (
    Measurement,
    NcclParseError,
    NcclRow,
    NcclRun,
    RankInfo,
    parse_all_reduce,
)
from clusterctl.nccl.report import render_table, to_json, to_junit

__all__ = [
    "Finding",
    "Localization",
    "Measurement",
    "NcclParseError",
    "NcclRow",
    "NcclRun",
    "PairResult",
    "RankInfo",
    "SizeFigure",
    "Suspect",
    "SuspectPair",
    "Thresholds",
    "Verdict",
    "format_all_reduce",
    "judge",
    "judge_peers",
    "localize",
    "overall_status",
    "parse_all_reduce",
    "ranks_for_hosts",
    "render_table",
    "row_from_times",
    "to_json",
    "to_junit",
]
