"""The nccl-tests footer: out-of-bounds values before any result row are refused, and the
average bus bandwidth's own OK/FAILED (NCCL_TESTS_MIN_BW) is kept when printed."""

from __future__ import annotations

import pytest

from clusterctl.nccl.parse import NcclParseError, parse_all_reduce

HEADER = (
    "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
    "# (B) (elements) (us) (GB/s) (GB/s) (us) (GB/s) (GB/s)\n"
)


def row(size: int) -> str:
    side = "10.0  1.00  1.00  0"
    return f"{size:12d}  {size // 4:12d}  float  sum  -1  {side}  {side}\n"


def test_a_footer_before_any_row_is_refused_naming_its_line() -> None:
    with pytest.raises(NcclParseError, match="footer before any result row") as info:
        parse_all_reduce(HEADER + "# Out of bounds values : 0 OK\n" + row(8))
    assert info.value.line_no == 3


@pytest.mark.parametrize(("state", "failed"), [("FAILED", True), ("OK", False), ("", None)])
def test_the_average_bandwidths_own_verdict_is_kept(state: str, failed: bool | None) -> None:
    text = (
        HEADER
        + row(8)
        + row(16)
        + f"# Out of bounds values : 0 OK\n# Avg bus bandwidth : 1.5 {state}\n"
    )
    run = parse_all_reduce(text)
    assert run.avg_busbw_gbps == 1.5 and run.avg_busbw_failed is failed
