"""Slurm power saving from the spec: a pure function of `partitions[].idleMinutes/minNodes`.

What slurm.conf gets (SuspendTime per partition, SuspendExcNodes for minNodes, the timeouts) and
what the power program on the scheduler is told (clusterctl/power: the scale set of each node
group). Values from Azure/cyclecloud-slurm's slurm.conf.template (docs/decisions/0001):
SuspendTimeout 600, ResumeTimeout 1800 (an ND VM can take up to 20 minutes to provision).
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.topology import scale_sets_of

SUSPEND_TIMEOUT_S = 600
RESUME_TIMEOUT_S = 1800
INFINITE = "INFINITE"


@dataclass(frozen=True)
class PartitionPower:
    name: str
    suspend_time: str
    """Seconds idle before a node is deallocated, or INFINITE (idleMinutes: 0)."""
    kept_up: tuple[str, ...]
    """Node names never suspended (the first minNodes of the partition)."""


@dataclass(frozen=True)
class PowerPlan:
    partitions: tuple[PartitionPower, ...]
    reason_prefix: str
    suspend_timeout_s: int = SUSPEND_TIMEOUT_S
    resume_timeout_s: int = RESUME_TIMEOUT_S

    @property
    def suspend_time(self) -> str:
        """The global SuspendTime: the shortest partition's (each partition sets its own)."""
        times = [int(p.suspend_time) for p in self.partitions if p.suspend_time != INFINITE]
        return str(min(times)) if times else INFINITE

    @property
    def exc_nodes(self) -> str:
        return ",".join(_hostlist(p.kept_up) for p in self.partitions if p.kept_up)

    def of(self, partition: str) -> PartitionPower:
        return next(p for p in self.partitions if p.name == partition)


def power_plan(spec: ClusterSpec) -> PowerPlan:
    parts = []
    for part in spec.partitions:
        names = [
            h
            for g in scale_sets_of(part.name, part.nodes, part.max_nodes_per_scale_set)
            for h in g.hostnames()
        ]
        idle = part.idle_minutes
        parts.append(
            PartitionPower(
                part.name,
                str(idle * 60) if idle else INFINITE,
                tuple(names[: part.min_nodes]) if idle else (),
            )
        )
    return PowerPlan(tuple(parts), spec.health_checks.drain_prefix)


def _hostlist(names: tuple[str, ...]) -> str:
    """Compress `gpu-pg0-1, gpu-pg0-2, gpu-pg1-1` to `gpu-pg0-[1-2],gpu-pg1-1` (Slurm syntax)."""
    groups: dict[str, list[int]] = {}
    for name in names:
        prefix, _, num = name.rpartition("-")
        groups.setdefault(prefix, []).append(int(num))
    out = []
    for prefix, nums in groups.items():
        runs: list[list[int]] = []
        for n in sorted(nums):
            if runs and n == runs[-1][1] + 1:
                runs[-1][1] = n
            else:
                runs.append([n, n])
        if len(runs) == 1 and runs[0][0] == runs[0][1]:
            out.append(f"{prefix}-{runs[0][0]}")
        else:
            inner = ",".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)
            out.append(f"{prefix}-[{inner}]")
    return ",".join(out)
