"""Shared GPUs (a partition's `sharing`): what nvidia-smi or Slurm would refuse at boot, refused at
plan time with the field as the user wrote it."""

from __future__ import annotations

from collections.abc import Iterator

from clusterctl.errors import Finding
from clusterctl.platform import cloud_of, only_on
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.kubernetes import aks_gpu_instance_profile
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
def sharing_needs_the_gpu_operator(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """On Kubernetes the GPU Operator shares GPUs (its MIG manager, its device plugin's
    time-slicing config); with `gpuDriver: managed` only a layout the cloud itself makes at node
    creation (AKS gpuInstanceProfile, one profile filling every GPU) works."""
    if spec.kubernetes.gpu_driver == "gpu-operator":
        return
    can_profile = cloud_of(spec.cloud).kubernetes_mig_pools
    for i, part in enumerate(spec.partitions):
        sharing = part.sharing
        if sharing is None or (can_profile and aks_gpu_instance_profile(part, cat)):
            continue
        what = "MIG layout" if sharing.mig else "time-slicing (shards)"
        hint = (
            " (or one profile filling the GPU, e.g. {1g.10gb: 7}, which the AKS pool makes "
            "itself by gpuInstanceProfile)"
            if can_profile and sharing.mig
            else ""
        )
        yield Finding(
            "error",
            f"this {what} needs the GPU Operator; set kubernetes.gpuDriver: gpu-operator{hint}",
            field_path("partitions", i, "sharing"),
        )


def sharing_fits_the_gpu(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    for i, part in enumerate(spec.partitions):
        sharing, sku = part.sharing, cat.get(part.sku, spec.cloud)
        if sharing is None or sku is None:
            continue
        where = field_path("partitions", i, "sharing")
        if sharing.mig and sharing.shards is not None:
            yield Finding(
                "error",
                "give mig or shards, not both (shards time-share whole GPUs, not MIG slices)",
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


def no_nccl_acceptance_on_mig_slices(spec: ClusterSpec, cat: Catalog) -> Iterator[Finding]:
    """The post-deploy NCCL run uses the default partition (node pool); on MIG slices it would
    measure no fabric, as `validate --nccl` says when it refuses one."""
    part = spec.default_partition
    if spec.validation.nccl.on_deploy and part.sharing and part.sharing.mig:
        yield Finding(
            "error",
            f"the NCCL acceptance test would run on {part.name}, whose GPUs are MIG slices (NCCL "
            "across MIG slices is not a bandwidth acceptance test); set onDeploy: false or make "
            "a whole-GPU partition the default",
            field_path("validation", "nccl", "onDeploy"),
        )


RULES: tuple[Rule, ...] = (
    sharing_fits_the_gpu,
    sharing_needs_the_gpu_operator,
    no_nccl_acceptance_on_mig_slices,
)
