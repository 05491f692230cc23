"""What a notebook asks for, checked against the stack before anything starts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from clusterctl.errors import UserError
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.model import ClusterSpec, PartitionSpec

GRES = re.compile(r"^(?P<name>gpu|shard)(?::(?P<type>[a-z0-9.]+))?:(?P<count>[1-9][0-9]*)$")
DURATION = re.compile(r"^(?P<n>[1-9][0-9]*)(?P<unit>[mhd]?)$")
MINUTES = {"": 1, "m": 1, "h": 60, "d": 24 * 60}
DEFAULT_TIME = "4h"


@dataclass(frozen=True)
class NotebookRequest:
    partition: str
    gres: str
    """Slurm's spelling: `gpu:2`, `gpu:1g.10gb:1`, `shard:1`."""
    minutes: int

    @property
    def k8s_resources(self) -> dict[str, int]:
        """The same request as Kubernetes resources: whole GPUs, a MIG profile under the GPU
        Operator's `mixed` strategy (nvidia.com/mig-PROFILE), or a time-sliced replica."""
        _, _, rest = self.gres.partition(":")
        kind, _, count = rest.rpartition(":")
        if kind:
            return {f"nvidia.com/mig-{kind}": int(count)}
        return {"nvidia.com/gpu": int(count)}


def parse_minutes(text: str) -> int:
    match = DURATION.match(text.strip().lower())
    if not match:
        raise UserError(f"--time {text}: a duration such as 90m, 4h or 1d")
    return int(match["n"]) * MINUTES[match["unit"]]


def _partition(spec: ClusterSpec, stack: str, name: str | None) -> PartitionSpec:
    if name is None:
        return spec.default_partition
    for part in spec.partitions:
        if part.name == name:
            return part
    have = ", ".join(p.name for p in spec.partitions)
    raise UserError(f"--partition {name}: stack {stack} has no such partition (it has: {have})")


def _check_gres(gres: str, part: PartitionSpec, per_node: int) -> None:
    match = GRES.match(gres)
    if not match:
        raise UserError(
            f"--gres {gres}: spell it gpu:N, gpu:PROFILE:N (a MIG slice, e.g. gpu:1g.10gb:1) "
            "or shard:N"
        )
    sharing = part.sharing
    mig = dict(sharing.mig) if sharing else {}
    shards = sharing.shards if sharing else None
    kind, count = match["type"], int(match["count"])
    if match["name"] == "shard" and not shards:
        raise UserError(f"--gres {gres}: partition {part.name} has no shards (sharing.shards)")
    if kind and kind not in mig:
        offered = ", ".join(sorted(mig)) or "none"
        raise UserError(
            f"--gres {gres}: partition {part.name} offers no MIG slice {kind} "
            f"(its sharing.mig: {offered})"
        )
    if match["name"] == "shard":
        limit = (shards or 0) * per_node
    elif kind:
        limit = mig[kind] * per_node
    else:  # on a MIG partition, `gpu:N` is any N slices
        limit = (sum(mig.values()) or 1) * per_node
    if count > limit:
        raise UserError(f"--gres {gres}: a node of partition {part.name} has {limit} of those")


def notebook_request(
    spec: ClusterSpec,
    cat: Catalog,
    stack: str,
    *,
    gpus: int | None = None,
    gres: str | None = None,
    time: str = DEFAULT_TIME,
    partition: str | None = None,
) -> NotebookRequest:
    """The request, or UserError naming the flag to fix."""
    if gpus is not None and gres is not None:
        raise UserError(
            "--gpus and --gres both ask for GPUs: give one (--gpus N whole GPUs, or --gres "
            "gpu:PROFILE:N for a MIG slice, shard:N for a shared GPU)"
        )
    part = _partition(spec, stack, partition)
    per_node = cat.gpus_per_node(part.sku) or 0
    if gpus is not None and not 1 <= gpus <= per_node:
        raise UserError(f"--gpus {gpus}: a node of partition {part.name} has {per_node} GPUs")
    spelled = gres if gres is not None else f"gpu:{gpus or 1}"
    _check_gres(spelled, part, per_node)
    return NotebookRequest(part.name, spelled, parse_minutes(time))
