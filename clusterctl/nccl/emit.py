"""Write all-reduce results in the current nccl-tests text layout.

Used by probes that are not nccl-tests (the sandbox's TCP all-reduce) so that one parser and one
judge serve both. Field widths follow NVIDIA/nccl-tests `src/util.cu`.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusterctl.nccl.model import Measurement, NcclRow, RankInfo

__all__ = ["format_all_reduce", "ranks_for_hosts", "row_from_times"]

_DTYPE_BYTES = {
    "int8": 1,
    "uint8": 1,
    "half": 2,
    "bfloat16": 2,
    "float": 4,
    "int32": 4,
    "uint32": 4,
    "double": 8,
    "int64": 8,
    "uint64": 8,
}


def _float_str(value: float, width: int) -> str:
    # Same fallbacks as getFloatStr(): fewer decimals, then exponent, to stay within `width`.
    for fmt in (f"{{:{width}.2f}}", f"{{:{width}.1f}}", f"{{:{width}.0f}}"):
        text = fmt.format(value)
        if len(text) <= width:
            return text
    return f"{value:{width}.{1 if width >= 7 else 0}e}"


def row_from_times(
    size_bytes: int,
    out_of_place_us: float,
    in_place_us: float,
    *,
    n_ranks: int,
    dtype: str = "float",
    redop: str = "sum",
    wrong: int | None = 0,
) -> NcclRow:
    """A row with algbw = bytes / time and busbw = algbw * 2(n-1)/n, as all_reduce_perf does."""
    if n_ranks < 1:
        raise ValueError("n_ranks must be >= 1")
    factor = 2 * (n_ranks - 1) / n_ranks

    def side(t_us: float) -> Measurement:
        algbw = size_bytes / (t_us * 1e3) if t_us > 0 else 0.0
        return Measurement(t_us, algbw, algbw * factor, wrong=wrong)

    return NcclRow(
        size_bytes=size_bytes,
        count=size_bytes // _DTYPE_BYTES.get(dtype, 4),
        dtype=dtype,
        redop=redop,
        root=-1,
        out_of_place=side(out_of_place_us),
        in_place=side(in_place_us),
    )


def ranks_for_hosts(
    hosts: Sequence[str], *, gpus_per_host: int = 1, gpu_name: str = "cpu"
) -> tuple[RankInfo, ...]:
    return tuple(
        RankInfo(rank=h * gpus_per_host + d, host=host, device=d, gpu_name=gpu_name, group=0)
        for h, host in enumerate(hosts)
        for d in range(gpus_per_host)
    )


def _side_text(m: Measurement) -> str:
    wrong = "   N/A" if m.wrong is None else f"{float(m.wrong):6g}"
    return (
        f"  {_float_str(m.time_us, 7)}  {_float_str(m.algbw_gbps, 6)}"
        f"  {_float_str(m.busbw_gbps, 6)}  {wrong}"
    )


def format_all_reduce(
    rows: Sequence[NcclRow],
    *,
    ranks: Sequence[RankInfo] = (),
    hosts: Sequence[str] = (),
    gpus_per_host: int = 1,
    gpu_name: str = "cpu",
    warmup_iters: int = 5,
    iters: int = 20,
    program: str = "all_reduce_perf",
    version: str = "2.17.1",
) -> str:
    """Render rows (with `# Rank` lines from `ranks`, or built from `hosts`) as nccl-tests does."""
    if not rows:
        raise ValueError("no rows to write")
    if not ranks:
        ranks = ranks_for_hosts(hosts, gpus_per_host=gpus_per_host, gpu_name=gpu_name)
    sizes = [r.size_bytes for r in rows]
    checked = any(r.out_of_place.wrong is not None for r in rows)
    out = [
        f"# nccl-tests version {version} (clusterctl emit)",
        f"# Collective test starting: {program}",
        f"# nThread 1 nGpus 1 minBytes {min(sizes)} maxBytes {max(sizes)} step: 2(factor) "
        f"warmup iters: {warmup_iters} iters: {iters} agg iters: 1 validation: {int(checked)} "
        "graph: 0",
        "#",
        "# Using devices",
    ]
    for rank in ranks:
        bus = rank.bus_id or "0000:00:00"
        out.append(
            f"#  Rank {rank.rank:2d} Group {rank.group or 0:2d} Pid {rank.pid:6d} on "
            f"{rank.host:>10s} device {rank.device:2d} [{bus}] {rank.gpu_name}"
        )
    blank = ("", "", "", "", "")
    out += [
        "#",
        "# {:>10s}  {:>12s}  {:>8s}  {:>6s}  {:>6s}           out-of-place"
        "                       in-place          ".format(*blank),
        "# {:>10s}  {:>12s}  {:>8s}  {:>6s}  {:>6s}  {:>7s}  {:>6s}  {:>6s}  {:>6s}"
        "  {:>7s}  {:>6s}  {:>6s}  {:>6s}".format(
            "size", "count", "type", "redop", "root",
            "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong",
        ),
        "# {:>10s}  {:>12s}  {:>8s}  {:>6s}  {:>6s}  {:>7s}  {:>6s}  {:>6s}  {:>6s}"
        "  {:>7s}  {:>6s}  {:>6s}  {:>6s}".format(
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "",
            "(us)", "(GB/s)", "(GB/s)", "",
        ),
    ]  # fmt: skip
    wrong_total = 0
    for r in rows:
        root = -1 if r.root is None else r.root
        out.append(
            f"{r.size_bytes:12d}  {r.count:12d}  {r.dtype:>8s}  {r.redop:>6s}  {root:6d}"
            + _side_text(r.out_of_place)
            + _side_text(r.in_place)
        )
        wrong_total += (r.out_of_place.wrong or 0) + (r.in_place.wrong or 0)
    busbws = [m.busbw_gbps for r in rows for m in (r.out_of_place, r.in_place)]
    avg = sum(busbws) / len(busbws)
    out += [
        f"# {'Out of bounds values':<20s} : {wrong_total} {'FAILED' if wrong_total else 'OK'}",
        f"# {'Avg bus bandwidth':<20s} : {avg:g} ",
        "#",
        f"# Collective test concluded: {program}",
        "#",
    ]
    return "\n".join(out) + "\n"
