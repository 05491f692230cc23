"""Which nccl-tests collective a result table is, from what the log shows.

Older nccl-tests name the program nowhere (no `# Collective test starting:` line), and every
binary prints the same columns (`size count type redop root`, or before 2019 a layout per binary),
so the table itself has to tell. What tells (NVIDIA/nccl-tests `src/common.cu` `setupArgs` and
each `src/*.cu` `GetCollByteCount` / `GetBw`):

- the program named on a command line or argv echo (`.../all_gather_perf -b 8 ...`) or in the
  `# Collective test starting/concluded:` lines;
- `redop`: `none` for the collectives that do not reduce (all_gather, broadcast, alltoall,
  sendrecv, gather, scatter, hypercube); no `redop` column at all in the old all_gather and
  broadcast layouts;
- `root`: -1 for all_reduce; a rank number for broadcast, reduce, gather, scatter;
- `count` against `size`: all_reduce prints count = size / element size; all_gather,
  reduce_scatter, alltoall, gather and scatter print the count per rank, size / (n x element);
- busbw / algbw: 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter, alltoall,
  1 for broadcast, reduce and sendrecv.

Pure functions over parsed rows; standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "ELEMENT_BYTES",
    "PROGRAM",
    "Verdict",
    "busbw_ratio",
    "identify",
    "programs_named",
    "ranks_from_ratio",
]

COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
    "reduce",
    "alltoall",
    "sendrecv",
    "gather",
    "scatter",
    "hypercube",
)
# `reduce_perf` must not match inside `all_reduce_perf`: a program name starts a word or a path part
PROGRAM = re.compile(
    r"(?<![A-Za-z0-9_])(" + "|".join(COLLECTIVES) + r")_perf(?:_mpi)?(?![A-Za-z0-9_])"
)
# Type names nccl-tests prints (`test_typenames`), and the older spellings.
ELEMENT_BYTES = {
    "int8": 1, "char": 1, "uint8": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "float16": 2, "bfloat16": 2,
    "int32": 4, "int": 4, "uint32": 4, "float": 4, "float32": 4,
    "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}  # fmt: skip
NOT_REDUCING = "all_gather, broadcast, alltoall or sendrecv"
PER_RANK = "reduce_scatter, all_gather or alltoall"
MIN_ALGBW = 1.0  # GB/s: below this, two-decimal rounding blurs busbw / algbw


class _Side(Protocol):  # read-only members: the rows are frozen dataclasses
    @property
    def algbw_gbps(self) -> float: ...
    @property
    def busbw_gbps(self) -> float: ...


class _Row(Protocol):
    @property
    def size_bytes(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def dtype(self) -> str: ...
    @property
    def redop(self) -> str: ...
    @property
    def root(self) -> int | None: ...
    @property
    def line_no(self) -> int: ...
    @property
    def out_of_place(self) -> _Side: ...
    @property
    def in_place(self) -> _Side: ...


@dataclass(frozen=True)
class Verdict:
    all_reduce: bool
    reason: str = ""  # why not, or why it cannot be told; one line


def programs_named(line: str) -> list[str]:
    """Collectives whose `*_perf` binary the line names."""
    return [m.group(1) for m in PROGRAM.finditer(line)]


def busbw_ratio(rows: Sequence[_Row]) -> float | None:
    """busbw / algbw of the table when every row fast enough to tell agrees; else None."""
    ratios = [
        m.busbw_gbps / m.algbw_gbps
        for r in rows
        for m in (r.out_of_place, r.in_place)
        if m.algbw_gbps >= MIN_ALGBW
    ]
    if not ratios or max(ratios) - min(ratios) > 0.02 + 0.01 * max(ratios):
        return None
    # the fastest row rounds least
    best = max(
        (m for r in rows for m in (r.out_of_place, r.in_place) if m.algbw_gbps >= MIN_ALGBW),
        key=lambda m: m.algbw_gbps,
    )
    return best.busbw_gbps / best.algbw_gbps


def _close(ratio: float, expected: float) -> bool:
    return abs(ratio - expected) <= 0.005 + 0.005 * expected


def ranks_from_ratio(rows: Sequence[_Row]) -> int | None:
    """The all_reduce rank count n that busbw / algbw = 2(n-1)/n gives, if the table agrees."""
    ratio = busbw_ratio(rows)
    if ratio is None or not 1.0 - 0.005 <= ratio < 2.0:
        return None
    n = round(2 / (2 - ratio))
    return n if _close(ratio, 2 * (n - 1) / n) else None


def _from_names(named: Sequence[tuple[str, int]]) -> tuple[str | None, str]:
    programs = list(dict.fromkeys(name for name, _ in named))
    if len(programs) > 1:
        listed = ", ".join(f"{p}_perf" for p in programs)
        return None, f"the log names several nccl-tests programs ({listed}): pass one run at a time"
    if programs and programs[0] != "all_reduce":
        line = next(n for p, n in named if p == programs[0])
        return None, f"line {line}: this is a {programs[0]}_perf run, not all_reduce_perf"
    return (programs[0] if programs else None), ""


def _against(rows: Sequence[_Row], n_ranks: int | None) -> str:
    """Why the table cannot be all_reduce_perf's, or ''."""
    for r in rows:
        if r.redop == "none":
            return (
                f"line {r.line_no}: redop 'none' is printed by {NOT_REDUCING}, which are not "
                "all_reduce"
            )
    for r in rows:
        if r.root is not None and r.root != -1:
            return (
                f"line {r.line_no}: root {r.root} is printed by a rooted collective (reduce, "
                "broadcast), not all_reduce, whose root is -1"
            )
    for r in rows:
        elem = ELEMENT_BYTES.get(r.dtype)
        if elem is None or r.size_bytes == 0:
            continue
        if r.count == 0 or r.size_bytes != r.count * elem:
            per = r.size_bytes / (r.count * elem) if r.count else float("inf")
            what = (
                f"the count is per rank ({per:g} ranks x {r.count} x {elem} B), as {PER_RANK} "
                "print it"
                if r.count and per == int(per)
                else "size and count disagree"
            )
            return (
                f"line {r.line_no}: size {r.size_bytes} is not count {r.count} x {elem} B "
                f"({r.dtype}): {what}; all_reduce prints the whole count"
            )
    ratio = busbw_ratio(rows)
    if ratio is not None and n_ranks and n_ranks >= 2:
        ar = 2 * (n_ranks - 1) / n_ranks
        if not _close(ratio, ar) and _close(ratio, (n_ranks - 1) / n_ranks):
            return (
                f"busbw/algbw is {ratio:.3f} = (n-1)/n for {n_ranks} ranks, as {PER_RANK} "
                f"compute it; all_reduce's is 2(n-1)/n = {ar:.3f}"
            )
    if ratio is not None and ratio < 0.98:
        return (
            f"busbw/algbw is {ratio:.3f}: all_reduce's is 2(n-1)/n, at least 1 on 2 or more "
            f"ranks; below 1 is {PER_RANK}"
        )
    return ""


def _for(rows: Sequence[_Row], n_ranks: int | None) -> bool:
    """The table shows all_reduce's own traits (not only an absence of others')."""
    if any(
        r.count and r.size_bytes == r.count * ELEMENT_BYTES.get(r.dtype, 0)
        for r in rows
        if r.redop != "none" and r.root in (None, -1)
    ):
        return True
    ratio = busbw_ratio(rows)
    return (
        ratio is not None
        and n_ranks is not None
        and n_ranks >= 3
        and (_close(ratio, 2 * (n_ranks - 1) / n_ranks))
    )


def identify(
    rows: Sequence[_Row], *, n_ranks: int | None, named: Sequence[tuple[str, int]] = ()
) -> Verdict:
    """Whether `rows` are all_reduce_perf's; `named`: (collective, line) a program was named at."""
    program, why = _from_names(named)
    if why:
        return Verdict(False, why)
    against = _against(rows, n_ranks)
    if against:
        if program == "all_reduce":
            line = named[0][1]
            return Verdict(False, f"line {line} names all_reduce_perf but {against}")
        return Verdict(False, against)
    if program == "all_reduce" or _for(rows, n_ranks):
        return Verdict(True)
    return Verdict(
        False,
        "cannot tell which collective this table is (no program name, no row whose count and "
        "type show it): keep the command line or the `# Collective test starting:` line in the log",
    )
