"""Parser for nccl-tests `all_reduce_perf` text output.

Layouts accepted (NVIDIA/nccl-tests `src/util.cu`, and older releases):
- current: `size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong`
- legacy:  `size count type redop | time algbw busbw error | time algbw busbw error`
- `#wrong`/`error` printed as `N/A` when the data check is off (`-c 0`)
- `-C 1` names the time column `cputime`; `-I 1` adds per-iteration columns to each side;
  `-S 1` appends a `YYYY-MM-DD HH:MM:SS` timestamp.
The column-name header line decides the layout; without one the row width decides.

Launcher prefixes are stripped (Open MPI `--tag-output` `[1,0]<stdout>:` and `--timestamp-output`,
MPICH/Hydra `-prepend-rank` `[0] `, srun `--label` `0: `, pdsh `host: `, `[host:pid] `, ISO and
ctime timestamps); when several ranks printed the same output it is read once. Only an
all_reduce_perf table is accepted: clusterctl.nccl.collective tells it from the others.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise

from clusterctl.nccl.collective import identify, programs_named

__all__ = [
    "Measurement",
    "NcclParseError",
    "NcclRow",
    "NcclRun",
    "NotAllReduce",
    "RankInfo",
    "parse_all_reduce",
]


class NcclParseError(ValueError):
    """The text is not a complete all_reduce_perf result."""

    def __init__(self, message: str, line_no: int | None = None) -> None:
        self.line_no = line_no
        super().__init__(f"line {line_no}: {message}" if line_no is not None else message)


class NotAllReduce(NcclParseError):
    """A whole result, but of another collective (or one that cannot be told)."""

    def __init__(self, reason: str, line_no: int | None = None) -> None:
        super().__init__(f"not an all_reduce_perf result: {reason}", line_no)


@dataclass(frozen=True)
class Measurement:
    """One side (out-of-place or in-place) of a result row."""

    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    wrong: int | None = None  # current layout; None when the check was off (N/A)
    error: float | None = None  # legacy layout: max relative error
    extras: tuple[tuple[str, float], ...] = ()  # -I 1 columns, e.g. ("i_p99", 12.3)


@dataclass(frozen=True)
class NcclRow:
    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int | None
    out_of_place: Measurement
    in_place: Measurement
    line_no: int = 0
    timestamp: str | None = None

    @property
    def busbw_min_gbps(self) -> float:
        return min(self.out_of_place.busbw_gbps, self.in_place.busbw_gbps)


@dataclass(frozen=True)
class RankInfo:
    rank: int
    host: str
    device: int
    gpu_name: str
    pid: int = 0
    group: int | None = None
    bus_id: str = ""


@dataclass(frozen=True)
class NcclRun:
    rows: tuple[NcclRow, ...]
    ranks: tuple[RankInfo, ...] = ()
    layout: str = "current"  # "current" (root + #wrong) or "legacy" (error column)
    time_label: str = "time"  # "cputime" with -C 1
    side_columns: tuple[str, ...] = ("time", "algbw", "busbw", "#wrong")
    oob_count: int = 0
    oob_failed: bool = False
    avg_busbw_gbps: float | None = None
    avg_busbw_failed: bool | None = None  # set when NCCL_TESTS_MIN_BW made the binary judge itself
    concluded: bool = False
    tests_version: str | None = None
    nccl_version: str | None = None
    n_threads: int | None = None
    n_gpus: int | None = None
    min_bytes: int | None = None
    max_bytes: int | None = None
    validation: bool | None = None

    @property
    def hosts(self) -> tuple[str, ...]:
        """Hosts in order of first appearance in the `# Rank` lines."""
        return tuple(dict.fromkeys(r.host for r in self.ranks))

    @property
    def gpus_per_host(self) -> dict[str, int]:
        return dict(Counter(r.host for r in self.ranks))

    @property
    def gpu_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.gpu_name for r in self.ranks))

    @property
    def n_ranks(self) -> int:
        return len(self.ranks)

    @property
    def max_size_bytes(self) -> int:
        return max(r.size_bytes for r in self.rows)

    @property
    def checked(self) -> bool:
        """True when at least one row carries a correctness figure (#wrong or error)."""
        return any(
            m.wrong is not None or m.error is not None
            for r in self.rows
            for m in (r.out_of_place, r.in_place)
        )


# Launcher prefixes, stripped from the start of a line until none is left. Those in _STREAM name
# the process (rank or host) that printed the line; timestamps name nothing.
_STREAM = (
    re.compile(r"\[(?P<s>[\w.-]*,\d+)\]<std(?:out|err)>:\s?"),  # Open MPI --tag-output
    re.compile(r"\[(?P<s>\d+)\]\s"),  # MPICH/Hydra -prepend-rank, Intel MPI
    re.compile(r"\[(?P<s>[A-Za-z0-9_.-]+:\d+)\]\s"),  # [host:pid]
    re.compile(r"(?P<s>\d+):(?=\s)\s?"),  # srun --label
    re.compile(r"(?P<s>[A-Za-z][\w.-]*):\s(?=\s*(?:#|\d))"),  # pdsh / clush `host: `
)
_STAMP = (
    re.compile(  # ISO 8601 (kubectl logs --timestamps, ts), optionally bracketed
        r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?:?\s?"
    ),
    re.compile(  # ctime, as Open MPI --timestamp-output writes it
        r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
        r"[ \d]\d \d{2}:\d{2}:\d{2} \d{4}\s?"
    ),
    re.compile(r"\[\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]\s?"),
    re.compile(r"<std(?:out|err)>:\s?"),  # Open MPI --timestamp-output without --tag-output
)


def strip_prefixes(raw: str) -> tuple[str, tuple[str, ...]]:
    """(the line without launcher prefixes, the stream tags they named)."""
    line = raw.lstrip()
    tags: list[str] = []
    while True:
        for pattern in _STAMP:
            if m := pattern.match(line):
                line = line[m.end() :].lstrip() if m.end() else line
                break
        else:
            for pattern in _STREAM:
                if m := pattern.match(line):
                    tags.append(m["s"])
                    line = line[m.end() :]
                    break
            else:
                return line.strip(), tuple(tags)


_RANK = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?Pid\s+(?P<pid>\d+)\s+on\s+"
    r"(?P<host>\S+)\s+device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s+(?P<name>.*?)\s*$"
)
_NTHREAD = re.compile(
    r"^#\s*nThread\s+(?P<nt>\d+)\s+nGpus\s+(?P<ng>\d+)\s+minBytes\s+(?P<minb>\d+)\s+"
    r"maxBytes\s+(?P<maxb>\d+)"
)
_VALIDATION = re.compile(r"validation:\s*(\d+)")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<n>\d+)\s+(?P<state>OK|FAILED)\b")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<bw>\S+)(?:\s+(?P<state>OK|FAILED))?")
_TESTS_VERSION = re.compile(r"^#\s*nccl-tests version\s+(\S+)")
_NCCL_VERSION = re.compile(r"NCCL version\s+(\S+)")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_CONCLUDED = re.compile(r"^#\s*Collective test concluded:\s*(\S+)")
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
class _Layout:
    prefix: tuple[str, ...]
    side: tuple[str, ...]
    timestamp: bool

    @property
    def width(self) -> int:
        return len(self.prefix) + 2 * len(self.side)


def _layout_from_header(tokens: list[str], line_no: int) -> _Layout:
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
    return _Layout(prefix=prefix, side=side, timestamp=timestamp)


def _layout_from_width(n_fields: int) -> _Layout | None:
    for cols in (_DEFAULT_CURRENT, _DEFAULT_LEGACY):
        if n_fields == len(cols):
            return _Layout(prefix=cols[:-8], side=cols[-4:], timestamp=False)
    return None


def _number(text: str, what: str, line_no: int) -> float:
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
    time_us = _number(values[0], names[0], line_no)
    algbw = _number(values[1], "algbw", line_no)
    busbw = _number(values[2], "busbw", line_no)
    wrong: int | None = None
    error: float | None = None
    if values[3] != "N/A":
        # `#wrong` is printed with %g, so large counts come out as 1e+06
        figure = _number(values[3], names[3], line_no)
        if names[3] == "#wrong":
            wrong = int(figure)
        else:
            error = figure
    extras = tuple(
        (name, _number(v, name, line_no)) for name, v in zip(names[4:], values[4:], strict=True)
    )
    return Measurement(time_us, algbw, busbw, wrong=wrong, error=error, extras=extras)


def _row(fields: list[str], layout: _Layout, line_no: int) -> NcclRow:
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


def _check_sizes(rows: list[NcclRow]) -> None:
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


@dataclass
class _State:
    layout: _Layout | None = None
    rows: list[NcclRow] = field(default_factory=list)
    ranks: list[RankInfo] = field(default_factory=list)
    info: dict[str, object] = field(default_factory=dict)
    footer_line: int | None = None
    started: str | None = None
    concluded: bool = False
    named: list[tuple[str, int]] = field(default_factory=list)  # (collective, line) of *_perf
    rank_lines: dict[int, tuple[RankInfo, int]] = field(default_factory=dict)
    avg_line: int | None = None


def parse_all_reduce(text: str) -> NcclRun:
    """Parse one all_reduce_perf run; raise NcclParseError if it is not whole and well formed."""
    st = _State()
    for line_no, line in _one_stream(text):
        st.named += [(name, line_no) for name in programs_named(line) if not _is_row(line)]
        if line.startswith("#"):
            _comment_line(st, line, line_no)
        else:
            _data_line(st, line, line_no)
    return _finish(st)


def _is_row(line: str) -> bool:
    """A result row starts with two integers (size, count); launcher chatter does not."""
    fields = line.split(None, 2)
    return len(fields) >= 2 and all(re.fullmatch(r"\d+", f) for f in fields[:2])


def _one_stream(text: str) -> list[tuple[int, str]]:
    """(line number, line) without launcher prefixes, each process's output read once.

    Where several tagged processes (ranks) printed a result table, the tables must be the same
    (every rank echoing rank 0's output); different tables are separate runs (nccl-tests built
    without MPI runs one test per process) and are refused.
    """
    lines: list[tuple[int, tuple[str, ...], str]] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line, tags = strip_prefixes(raw)
        if line:
            lines.append((line_no, tags, line))
    streams: dict[tuple[str, ...], list[tuple[int, str]]] = {}
    for line_no, tags, line in lines:
        streams.setdefault(tags, []).append((line_no, line))
    tables = [t for t, ls in streams.items() if any(_is_row(line) for _, line in ls)]
    if len(tables) <= 1:
        return [(n, line) for n, _, line in lines]
    first = _table_text(streams[tables[0]])
    for other in tables[1:]:
        if _table_text(streams[other]) != first:
            a, b = ("/".join(t) or "untagged" for t in (tables[0], other))
            raise NcclParseError(
                f"processes {a} and {b} each printed a result table and the tables differ "
                "(separate runs: nccl-tests built without MPI runs one test per process); "
                "pass one run's output",
                streams[other][0][0],
            )
    keep = tables[0]
    return [(n, line) for n, tags, line in lines if tags == keep or tags not in tables]


def _table_text(stream: list[tuple[int, str]]) -> list[str]:
    return [" ".join(line.split()) for _, line in stream if line.startswith("#") or _is_row(line)]


def _comment_line(st: _State, line: str, line_no: int) -> None:
    """The preamble, rank lines, column headers and footer: all start with '#'."""
    if m := _RANK.match(line):
        info = RankInfo(
            rank=int(m["rank"]),
            host=m["host"],
            device=int(m["device"]),
            gpu_name=m["name"],
            pid=int(m["pid"]),
            group=int(m["group"]) if m["group"] is not None else None,
            bus_id=m["bus"],
        )
        seen = st.rank_lines.get(info.rank)
        if seen is None:
            st.rank_lines[info.rank] = (info, line_no)
            st.ranks.append(info)
        elif seen[0] != info:
            raise NcclParseError(
                f"rank {info.rank} is listed twice, on {seen[0].host} device {seen[0].device} "
                f"(line {seen[1]}) and on {info.host} device {info.device}: two runs mixed?",
                line_no,
            )
    elif m := _NTHREAD.match(line):
        st.info.update(
            n_threads=int(m["nt"]),
            n_gpus=int(m["ng"]),
            min_bytes=int(m["minb"]),
            max_bytes=int(m["maxb"]),
        )
        if v := _VALIDATION.search(line):
            st.info["validation"] = v.group(1) != "0"
    elif m := _OOB.match(line):
        if not st.rows:
            raise NcclParseError("footer before any result row", line_no)
        # nccl-tests prints FAILED for any count above 0; a count with OK is not trusted either
        st.info.update(oob_count=int(m["n"]), oob_failed=m["state"] == "FAILED" or m["n"] != "0")
        st.footer_line = line_no
    elif m := _AVG.match(line):
        st.avg_line = line_no
        st.info["avg_busbw_gbps"] = _number(m["bw"], "Avg bus bandwidth", line_no)
        if m["state"]:
            st.info["avg_busbw_failed"] = m["state"] == "FAILED"
    elif m := _TESTS_VERSION.match(line):
        st.info["tests_version"] = m.group(1)
    elif m := _STARTING.match(line):
        st.started = m.group(1)
    elif _CONCLUDED.match(line):
        st.concluded = True
    else:
        tokens = line.lstrip("#").split()
        if "(B)" in tokens:
            _check_units(tokens, line_no)
        elif "size" in tokens and "count" in tokens:
            if "redop" not in tokens:
                named = identify([], n_ranks=None, named=st.named).reason
                if named.startswith(("line", "the log")):
                    raise NotAllReduce(named)
                raise NotAllReduce(
                    f"the column header has no 'redop' column ({' '.join(tokens[:4])} ...), "
                    "as all_gather_perf and broadcast_perf of older nccl-tests print it",
                    line_no,
                )
            if st.rows:
                raise NcclParseError(
                    "a second result table starts here; pass one run at a time", line_no
                )
            st.layout = _layout_from_header(tokens, line_no)


_UNITS = {"(B)", "(elements)", "(us)", "(GB/s)", "(%)"}


def _check_units(tokens: list[str], line_no: int) -> None:
    for token in tokens:
        if token.startswith("(") and token.endswith(")") and token not in _UNITS:
            raise NcclParseError(
                f"unit {token} in the column header: this reads sizes in (B), times in (us) and "
                "bandwidths in (GB/s), as nccl-tests prints them",
                line_no,
            )


def _data_line(st: _State, line: str, line_no: int) -> None:
    if m := _NCCL_VERSION.search(line):
        st.info.setdefault("nccl_version", m.group(1))
    fields = line.split()
    if not _is_row(line):
        return  # MPI, Slurm and NCCL INFO chatter
    if st.footer_line is not None:
        raise NcclParseError("result row after the footer; pass one run at a time", line_no)
    if st.layout is None:
        st.layout = _layout_from_width(len(fields))
        if st.layout is None:
            raise NcclParseError(f"row of {len(fields)} fields before any column header", line_no)
    st.rows.append(_row(fields, st.layout, line_no))


def _check_rank_numbers(st: _State) -> None:
    numbers = sorted(st.rank_lines)
    if numbers and numbers != list(range(len(numbers))):
        missing = sorted(set(range(numbers[-1] + 1)) - set(numbers))
        raise NcclParseError(
            f"the `# Rank` lines skip rank(s) {', '.join(map(str, missing[:8]))} of "
            f"0-{numbers[-1]}: lines lost or cut from the log"
        )


def _finish(st: _State) -> NcclRun:
    rows, layout = st.rows, st.layout
    if not rows:
        raise NcclParseError("no all_reduce_perf result rows found")
    found = identify(rows, n_ranks=len(st.ranks) or None, named=st.named)
    if not found.all_reduce:
        raise NotAllReduce(found.reason)
    if st.footer_line is None:
        raise NcclParseError(
            "output is truncated: no '# Out of bounds values' footer after the last row",
            rows[-1].line_no,
        )
    if st.avg_line is None or st.avg_line < st.footer_line:
        raise NcclParseError(
            "output is truncated: no '# Avg bus bandwidth' line after the "
            "'# Out of bounds values' footer",
            st.footer_line,
        )
    if st.started and not st.concluded:
        raise NcclParseError("output is truncated: no '# Collective test concluded' line")
    _check_sizes(rows)
    _check_rank_numbers(st)
    assert layout is not None
    return NcclRun(
        rows=tuple(rows),
        ranks=tuple(st.ranks),
        layout="current" if "root" in layout.prefix and layout.side[3] == "#wrong" else "legacy",
        time_label=layout.side[0],
        side_columns=layout.side,
        concluded=st.concluded,
        **st.info,  # type: ignore[arg-type]
    )
