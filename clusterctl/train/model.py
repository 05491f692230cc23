"""What a training validation is made of. Pure data, no I/O."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Preset:
    """The model and run sizes handed to gpt.py (its command-line options)."""

    layers: int
    dim: int
    heads: int
    seq: int
    batch: int
    vocab: int
    steps: int
    warmup: int

    def argv(self) -> list[str]:
        return [a for k, v in asdict(self).items() for a in (f"--{k}", str(v))]

    @property
    def tokens_per_step(self) -> int:
        return self.batch * self.seq


PRESETS = {
    # ~218M parameters in bf16: a few GB of memory per GPU, compute-bound on A100 and H100
    "gpu": Preset(
        layers=12, dim=1024, heads=16, seq=1024, batch=16, vocab=32768, steps=30, warmup=5
    ),
    # a CPU rank (the VM sandbox): small enough that a 2-core host runs a step in milliseconds
    "cpu": Preset(layers=2, dim=128, heads=4, seq=64, batch=4, vocab=1024, steps=12, warmup=2),
}


@dataclass(frozen=True)
class RankReport:
    rank: int
    node: str
    local_rank: int
    tokens_per_step: int
    step_s: tuple[float, ...]
    forward_s: tuple[float, ...]
    """The forward pass alone: no communication, so the rank's own speed."""


FailureKind = Literal["rendezvous", "oom", "lost", "peer", "crash", "no-output"]


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    node: str | None
    detail: str

    def line(self) -> str:
        return f"{self.node}: {self.detail}" if self.node else self.detail


@dataclass(frozen=True)
class TrainRun:
    nodes: tuple[str, ...]
    """The job's nodes, in Slurm's order (the srun task ids)."""
    ranks: tuple[RankReport, ...] = ()
    failures: tuple[Failure, ...] = ()
    start: dict = field(default_factory=dict)
    """Rank 0's start line: world size, backend, device, torch version, parameter count."""

    @property
    def gpus(self) -> int:
        return len(self.ranks)
