"""The result table of all_reduce_perf: its column layout (from the header or the row width) and
one row read against it. Pure functions; `clusterctl.nccl.parse` drives them line by line."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import pairwise

from clusterctl.nccl.model import Measurement, NcclParseError, NcclRow

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}$")

_TIME_NAMES = ("time", "cputime")
_CHECK_NAMES = ("#wrong", "error")
_DEFAULT_CURRENT = ("size", "count", "type", "redop", "root") + (
    "time",
    "algbw",
    "busbw",
    "#wrong",
) * 2
_DEFAULT_LEGACY = ("size", "count", "type", "redop") + ("time", "algbw", "busbw", "error") * 2


@dataclass(frozen=True)
class Layout:
    prefix: tuple[str, ...]
    side: tuple[str, ...]
    timestamp: bool

    @property
    def width(self) -> int:
        return len(self.prefix) + 2 * len(self.side)


def layout_from_header(tokens: list[str], line_no: int) -> Layout:
    timestamp = bool(tokens) and tokens[-1] == "timestamp"
    if timestamp:
        tokens = tokens[:-1]
    starts = [i for i, t in enumerate(tokens) if t in _TIME_NAMES]
    if len(starts) != 2:
        raise NcclParseError(
            f"column header has {len(starts)} time columns, expected 2 (out-of-place, in-place)",
            line_no,
        )
    prefix = tuple(tokens[: starts[0]])
    side = tuple(tokens[starts[0] : starts[1]])
    if tuple(tokens[starts[1] :]) != side:
        raise NcclParseError("out-of-place and in-place column groups differ", line_no)
    if "redop" not in prefix:
        raise NcclParseError("no 'redop' column: not an all_reduce_perf table", line_no)
    if side[:3] not in (("time", "algbw", "busbw"), ("cputime", "algbw", "busbw")):
        raise NcclParseError(f"unexpected column group {' '.join(side)!r}", line_no)
    if len(side) < 4 or side[3] not in _CHECK_NAMES:
        raise NcclParseError("no '#wrong' or 'error' column after busbw", line_no)
    return Layout(prefix=prefix, side=side, timestamp=timestamp)


def layout_from_width(n_fields: int) -> Layout | None:
    for cols in (_DEFAULT_CURRENT, _DEFAULT_LEGACY):
        if n_fields == len(cols):
            return Layout(prefix=cols[:-8], side=cols[-4:], timestamp=False)
    return None


def number(text: str, what: str, line_no: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise NcclParseError(f"{what} is not a number: {text!r}", line_no) from None
    if math.isnan(value) or value < 0:
        raise NcclParseError(f"{what} is {text!r}", line_no)
    return value


def _integer(text: str, what: str, line_no: int) -> int:
    if not re.fullmatch(r"-?\d+", text):
        raise NcclParseError(f"{what} is not an integer: {text!r}", line_no)
    return int(text)


def _side(names: tuple[str, ...], values: list[str], line_no: int) -> Measurement:
    time_us = number(values[0], names[0], line_no)
    algbw = number(values[1], "algbw", line_no)
    busbw = number(values[2], "busbw", line_no)
    wrong: int | None = None
    error: float | None = None
    if values[3] != "N/A":
        # `#wrong` is printed with %g, so large counts come out as 1e+06
        figure = number(values[3], names[3], line_no)
        if names[3] == "#wrong":
            wrong = int(figure)
        else:
            error = figure
    extras = tuple(
        (name, number(v, name, line_no)) for name, v in zip(names[4:], values[4:], strict=True)
    )
    return Measurement(time_us, algbw, busbw, wrong=wrong, error=error, extras=extras)


def read_row(fields: list[str], layout: Layout, line_no: int) -> NcclRow:
    width = layout.width + (2 if layout.timestamp else 0)
    if len(fields) != width:
        raise NcclParseError(
            f"result row has {len(fields)} fields, expected {width} (cut or garbled row?)",
            line_no,
        )
    head = dict(zip(layout.prefix, fields, strict=False))
    n_prefix, n_side = len(layout.prefix), len(layout.side)
    out_vals = fields[n_prefix : n_prefix + n_side]
    in_vals = fields[n_prefix + n_side : n_prefix + 2 * n_side]
    timestamp = None
    if layout.timestamp:
        date, clock = fields[-2:]
        if not _TIMESTAMP.match(date):
            raise NcclParseError(f"bad timestamp {date} {clock}", line_no)
        timestamp = f"{date} {clock}"
    if "type" not in head or "redop" not in head:
        raise NcclParseError("row has no type/redop fields", line_no)
    return NcclRow(
        size_bytes=_integer(head.get("size", ""), "size", line_no),
        count=_integer(head.get("count", ""), "count", line_no),
        dtype=head["type"],
        redop=head["redop"],
        root=_integer(head["root"], "root", line_no) if "root" in head else None,
        out_of_place=_side(layout.side, out_vals, line_no),
        in_place=_side(layout.side, in_vals, line_no),
        line_no=line_no,
        timestamp=timestamp,
    )


def check_sizes(rows: list[NcclRow]) -> None:
    # `-d all -o all` restarts the sweep for every (type, redop); zero-byte rows repeat
    # when small counts round down to 0 elements.
    for prev, row in pairwise(rows):
        if (prev.dtype, prev.redop) != (row.dtype, row.redop):
            continue
        if row.size_bytes < prev.size_bytes or (
            row.size_bytes == prev.size_bytes and row.size_bytes != 0
        ):
            raise NcclParseError(
                f"message sizes not increasing: {row.size_bytes} after {prev.size_bytes}",
                row.line_no,
            )


_UNITS = {"(B)", "(elements)", "(us)", "(GB/s)", "(%)"}


def check_units(tokens: list[str], line_no: int) -> None:
    for token in tokens:
        if token.startswith("(") and token.endswith(")") and token not in _UNITS:
            raise NcclParseError(
                f"unit {token} in the column header: this reads sizes in (B), times in (us) and "
                "bandwidths in (GB/s), as nccl-tests prints them",
                line_no,
            )
