"""Writes the derived_*.txt samples from the genuine ones; run it from anywhere.

Each sample is a genuine log with one transformation, described in SOURCES.md. Rows are rewritten
with the size/count relation and busbw factor nccl-tests uses for the collective being imitated
(per-rank counts and (n-1)/n for all_gather / reduce_scatter / alltoall, 1 for broadcast / reduce /
sendrecv, 2(n-1)/n for all_reduce).
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROW = re.compile(r"^(\s*)(\d+)(\s+)(\d+)(\s+\S+\s+)(\S+)(\s+)(-?\d+)(.*)$")


def _fmt(value: float, like: str) -> str:
    return f"{value:.2f}".rjust(len(like))


def _time(value: float) -> str:
    # nccl-tests' getFloatStr(): two decimals, then fewer, to fit 7 characters
    for digits in (2, 1, 0):
        text = f"{value:7.{digits}f}"
        if len(text) <= 7:
            return text
    return f"{value:7.0f}"


def rewrite_rows(text: str, *, redop=None, root=None, per_rank=1, factor=None, min_size=0) -> str:
    """Rows with a new redop/root and count = size / (4 * per_rank); with `factor`, the busbw the
    fabric reached is kept and algbw = busbw / factor, time = size / algbw (as that collective's
    nccl-tests binary would have printed them)."""
    out = []
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            out.append(line)
            continue
        size = int(m[2])
        if size < min_size:
            continue
        count = str(size // (4 * per_rank))
        rest = m[9]
        if factor is not None:
            f = rest.split()
            # time algbw busbw #wrong time algbw busbw #wrong
            for t, alg, bus in ((0, 1, 2), (4, 5, 6)):
                algbw = round(float(f[bus]) / factor, 2)
                if algbw > 0:
                    rest = _replace_field(rest, t, _time(size / (algbw * 1e3)))
                rest = _replace_field(rest, alg, _fmt(algbw, f[alg]))
        new_root = str(m[8] if root is None else root).rjust(len(m[8]))
        new_redop = (redop or m[6]).rjust(len(m[6]))
        out.append(m[1] + m[2] + m[3] + count.rjust(len(m[4])) + m[5] + new_redop + m[7])
        out[-1] += new_root + rest
    return "\n".join(out) + "\n"


def _replace_field(rest: str, index: int, new: str) -> str:
    spans = [m.span() for m in re.finditer(r"\S+", rest)]
    a, b = spans[index]
    start = max(a - (len(new) - (b - a)), 0) if len(new) > b - a else a
    return rest[:start] + new.rjust(b - start) + rest[b:]


def write(name: str, text: str) -> None:
    (HERE / name).write_text(text)


def main() -> None:
    h309 = (HERE / "nccl_tests_issue309_h100_2node.txt").read_text()
    aks = (HERE / "aks_rdma_ib_a100_2node_na.txt").read_text()
    n = 16
    # class 1: other collectives that name themselves nowhere
    write(
        "derived_reduce_scatter_unnamed.txt",
        rewrite_rows(h309, per_rank=n, factor=15 / 16, min_size=1024),
    )
    write(
        "derived_all_gather_unnamed.txt",
        rewrite_rows(h309, redop="none", per_rank=n, factor=15 / 16, min_size=1024),
    )
    write("derived_broadcast_unnamed.txt", rewrite_rows(h309, redop="none", root=0, factor=1))
    write("derived_reduce_unnamed.txt", rewrite_rows(h309, root=0, factor=1))
    write("derived_sendrecv_unnamed.txt", rewrite_rows(h309, redop="none", factor=1))
    write(
        "derived_reduce_scatter_no_ranks.txt",
        rewrite_rows(aks, per_rank=n, factor=15 / 16, min_size=2048),
    )
    rs = rewrite_rows(h309, per_rank=n, factor=15 / 16, min_size=1024)
    write(
        "derived_reduce_scatter_argv_all_reduce.txt",
        "+ mpirun -np 16 -npernode 8 /opt/nccl-tests/build/all_reduce_perf -b 1K -e 16G -f 2\n"
        + rs,
    )
    ag = rewrite_rows(h309, redop="none", per_rank=n, factor=15 / 16, min_size=1024)
    write(
        "derived_all_gather_argv.txt",
        "srun --mpi=pmix /opt/nccl-tests/build/all_gather_perf -b 1K -e 16G -f 2 -g 1\n" + ag,
    )
    # the 2.18.3 sample with its starting line lost and a concluded line of another program
    small = (HERE / "nccl_issue2441_h100nvl_v2183_small.txt").read_text().splitlines()
    small = [line for line in small if "Collective test starting" not in line]
    write(
        "derived_concluded_other.txt",
        "\n".join(
            line.replace("concluded: all_reduce_perf", "concluded: alltoall_perf") for line in small
        )
        + "\n",
    )

    for coll in ("all_gather", "broadcast", "reduce", "reduce_scatter"):
        legacy = (HERE / f"wohlbier_dgx2_v100_{coll}.txt").read_text().splitlines()
        write(f"derived_legacy_{coll}_unnamed.txt", "\n".join(legacy[1:]) + "\n")
    lines = h309.splitlines()
    # class 2: launcher prefixes
    write("derived_hydra_prepend_rank.txt", "".join(f"[0] {line}\n" for line in lines))
    both = []
    for i in range(0, len(lines), 3):  # two ranks' copies, interleaved in chunks of 3 lines
        both += [f"[0] {line}" for line in lines[i : i + 3]]
        both += [f"[1] {line}" for line in lines[i : i + 3]]
    write("derived_hydra_two_ranks.txt", "\n".join(both) + "\n")
    write(
        "derived_ompi_timestamp_tag.txt",
        "".join(
            f"Thu May 22 07:{36 + i // 60:02d}:{i % 60:02d} 2025[1,0]<stdout>:{line}\n"
            for i, line in enumerate(lines)
        ),
    )
    write(
        "derived_iso_host_pid.txt",
        "".join(
            f"2025-05-22T07:36:{i % 60:02d}.{i:09d}Z [bm-h100-01:29262] {line}\n"
            for i, line in enumerate(lines)
        ),
    )
    # nccl-tests built without MPI under `srun --label`: each process its own 1-rank run
    own: list[list[str]] = [[], []]
    for label, (host, pid) in enumerate((("bm-h100-01", 29262), ("bm-h100-02", 26633))):
        for line in lines:
            if "#  Rank" in line and "Rank  0 " not in line:
                continue
            own[label].append(line.replace("Pid  29262 on bm-h100-01", f"Pid  {pid} on {host}"))
    write(
        "derived_separate_runs.txt",
        "".join(f"{k}: {line}\n" for pair in zip(*own, strict=True) for k, line in enumerate(pair)),
    )
    # class 3: rank count
    no15 = [line for line in lines if "#  Rank 15 " not in line]
    write("derived_missing_gpu.txt", rewrite_rows("\n".join(no15), factor=28 / 15))
    write("derived_missing_gpu_no_ranks.txt", rewrite_rows(aks, factor=28 / 15))
    dup = []
    for line in lines:
        dup.append(line)
        if "#  Rank  5 " in line:
            dup.append(line)
    write("derived_rank_line_repeated.txt", "\n".join(dup) + "\n")
    # more of the same kind
    write(
        "derived_no_avg_line.txt",
        "\n".join(line for line in lines if "Avg bus bandwidth" not in line) + "\n",
    )
    write("derived_mbps_units.txt", h309.replace("(GB/s)", "(MB/s)"))


if __name__ == "__main__":
    main()
