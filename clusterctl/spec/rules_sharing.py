"""Shared GPUs (a partition's `sharing`): what nvidia-smi or Slurm would refuse at boot, refused at
plan time with the field as the user wrote it."""

from __future__ import annotations

from collections.abc import Iterator

from clusterctl.errors import Finding
from clusterctl.platform import only_on
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.mig import (
    COMPUTE_SLICES,
    compute_slices,
    describe,
    place,
    unknown_profiles,
)
from clusterctl.spec.model import ClusterSpec, field_path
from clusterctl.spec.rules import Rule


@only_on(scheduler="kubernetes")
def sharing_only_on_slurm(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        if part.sharing is not None:
            yield Finding(
                "error",
                "shared GPUs are built for Slurm partitions only; remove it (a Kubernetes node "
                "pool's MIG or time-slicing is not rendered yet)",
                field_path("partitions", i, "sharing"),
            )


@only_on(scheduler="slurm")
def sharing_fits_the_gpu(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        sharing, sku = part.sharing, cat.get(part.sku, spec.cloud)
        if sharing is None or sku is None:
            continue
        where = field_path("partitions", i, "sharing")
        if sharing.mig and sharing.shards is not None:
            yield Finding(
                "error",
                "give mig or shards, not both (Slurm shards whole GPUs, not MIG slices)",
                where,
            )
            continue
        if not sharing.mig:
            if sharing.shards is None:
                yield Finding("error", "empty: give mig (a layout) or shards (a count)", where)
            continue
        gpu = cat.mig(sku)
        if gpu is None:
            yield Finding(
                "error",
                f"{sku.name} ({sku.gpu_model} {sku.gpu_memory_gi_b} GB) has no MIG; use "
                "sharing.shards to share its GPUs",
                f"{where}.mig",
            )
            continue
        unknown = unknown_profiles(gpu, sharing.mig)
        if unknown:
            yield Finding(
                "error",
                f"{', '.join(unknown)}: not a MIG profile of {gpu.name} ({sku.name}); its "
                f"profiles: {', '.join(p.name for p in gpu.profiles)}",
                f"{where}.mig",
            )
            continue
        if place(gpu, sharing.mig) is None:
            used = compute_slices(gpu, sharing.mig)
            why = (
                f"{used} compute slices of {COMPUTE_SLICES}"
                if used > COMPUTE_SLICES
                else "no placement without overlapping memory slices"
            )
            yield Finding(
                "error",
                f"{describe(sharing.mig)} does not fit one {gpu.name} ({why}, by NVIDIA's MIG "
                "placement rules); e.g. 1g x7, 2g x3 + 1g x1, 3g x2, or 4g + 3g",
                f"{where}.mig",
            )


RULES: tuple[Rule, ...] = (sharing_only_on_slurm, sharing_fits_the_gpu)
