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

import re
from dataclasses import dataclass, field

from clusterctl.nccl.algorithm import algorithm_in
from clusterctl.nccl.collective import identify, programs_named
from clusterctl.nccl.fabric import hosts_fabric, networks_of
from clusterctl.nccl.model import (
    Measurement,
    NcclParseError,
    NcclRow,
    NcclRun,
    NotAllReduce,
    RankInfo,
)
from clusterctl.nccl.rows import (
    Layout,
    check_sizes,
    check_units,
    layout_from_header,
    layout_from_width,
    number,
    read_row,
)

__all__ = [
    "Measurement",
    "NcclParseError",
    "NcclRow",
    "NcclRun",
    "NotAllReduce",
    "RankInfo",
    "parse_all_reduce",
]


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
_CUDA_DRIVER = re.compile(r"NCCL INFO cudaDriverVersion\s+(\d+)")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_CONCLUDED = re.compile(r"^#\s*Collective test concluded:\s*(\S+)")


@dataclass
class _State:
    layout: Layout | None = None
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
    plain = [strip_prefixes(raw)[0] for raw in text.splitlines()]
    fabric = hosts_fabric(plain)
    st.info["fabric"] = fabric
    st.info["algorithm"] = algorithm_in(plain)
    st.info["networks"] = networks_of(fabric)
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
        _rank_line(st, m, line_no)
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
        _out_of_bounds_line(st, m, line_no)
    elif m := _AVG.match(line):
        st.avg_line = line_no
        st.info["avg_busbw_gbps"] = number(m["bw"], "Avg bus bandwidth", line_no)
        if m["state"]:
            st.info["avg_busbw_failed"] = m["state"] == "FAILED"
    elif m := _TESTS_VERSION.match(line):
        st.info["tests_version"] = m.group(1)
    elif m := _STARTING.match(line):
        st.started = m.group(1)
    elif _CONCLUDED.match(line):
        st.concluded = True
    else:
        _header_line(st, line.lstrip("#").split(), line_no)


def _rank_line(st: _State, m: re.Match[str], line_no: int) -> None:
    """`#  Rank  3 Group  0 Pid ... on host device 3 [bus] GPU`; the same rank twice with other
    values means two runs' output mixed."""
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


def _out_of_bounds_line(st: _State, m: re.Match[str], line_no: int) -> None:
    if not st.rows:
        raise NcclParseError("footer before any result row", line_no)
    # nccl-tests prints FAILED for any count above 0; a count with OK is not trusted either
    st.info.update(oob_count=int(m["n"]), oob_failed=m["state"] == "FAILED" or m["n"] != "0")
    st.footer_line = line_no


def _header_line(st: _State, tokens: list[str], line_no: int) -> None:
    """The units line is checked; the column header sets the layout (one table per run)."""
    if "(B)" in tokens:
        check_units(tokens, line_no)
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
        st.layout = layout_from_header(tokens, line_no)


def _data_line(st: _State, line: str, line_no: int) -> None:
    if m := _NCCL_VERSION.search(line):
        st.info.setdefault("nccl_version", m.group(1))
    if m := _CUDA_DRIVER.search(line):
        st.info.setdefault("cuda_driver", m.group(1))
    fields = line.split()
    if not _is_row(line):
        return  # MPI, Slurm and NCCL INFO chatter
    if st.footer_line is not None:
        raise NcclParseError("result row after the footer; pass one run at a time", line_no)
    if st.layout is None:
        st.layout = layout_from_width(len(fields))
        if st.layout is None:
            raise NcclParseError(f"row of {len(fields)} fields before any column header", line_no)
    st.rows.append(read_row(fields, st.layout, line_no))


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
    check_sizes(rows)
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
