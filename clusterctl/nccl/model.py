"""What a parsed all_reduce_perf run is: its rows, ranks and header facts, and the parse errors."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from clusterctl.nccl.fabric import HostFabric, Network

__all__ = ["Measurement", "NcclParseError", "NcclRow", "NcclRun", "NotAllReduce", "RankInfo"]


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
    cuda_driver: str | None = None  # NCCL INFO cudaDriverVersion, e.g. 12040
    networks: tuple[Network, ...] = ()
    """What NCCL's INFO lines say it used, hosts grouped by network (clusterctl.nccl.fabric)."""
    fabric: tuple[HostFabric, ...] = ()
    """The same per host: devices, GPUDirect RDMA, fallbacks."""
    algorithm: str | None = None
    """NCCL_ALGO as the INFO lines say: `Ring`, another value, `default` (unset), None (the log
    does not say; clusterctl.nccl.algorithm)."""

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
