"""MIG layouts: whether a partition's `sharing.mig` fits one GPU, and where each instance goes.

The placement rules are NVIDIA's (MIG user guide, "Supported MIG Profiles": a GPU has 7 compute
and 8 memory slices; a profile's instance starts only at the memory slices its placement table
lists, what `nvidia-smi mig -lgipp` prints). The GPU instance ID of a placement is its index in
the GPU's slice tree (the driver's "swizzle id": 0 the whole GPU, 1-2 the halves, 3-6 the
quarters, 7-14 the eighths), which is how `nvidia-smi mig -lgi` numbers instances; the boot step
checks the IDs it gets against these before slurmd starts (docs/shared-gpus.md lists this among
what a live GPU must confirm).
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.spec.catalog import Catalog, MigGpu, MigProfile, Sku
from clusterctl.spec.model import PartitionSpec

COMPUTE_SLICES = 7
MEMORY_SLICES = 8
CAP_MINORS_PER_GI = 9
"""/proc/driver/nvidia-caps/mig-minors: per GPU instance, one `access` minor and 8 for its compute
instances; 15 GPU instances per GPU; minors 1 and 2 are `config` and `monitor`."""
GIS_PER_GPU = 15


@dataclass(frozen=True)
class Placement:
    profile: MigProfile
    start: int
    """The first memory slice."""

    @property
    def gi_id(self) -> int:
        size = self.profile.memory_slices
        node = 1 << (size - 1).bit_length()
        return MEMORY_SLICES // node - 1 + self.start // node

    @property
    def spec(self) -> str:
        """`nvidia-smi mig -cgi` profile tuple: name and placement start."""
        return f"{self.profile.name}:{self.start}"


def cap_minor(gpu: int, gi_id: int, ci_id: int | None = None) -> int:
    """The /dev/nvidia-caps/nvidia-capN minor of a GPU instance (or of its compute instance):
    NVIDIA MIG user guide, "Device Nodes and Capabilities" (the mig-minors file); Slurm's gres.conf
    example pairs nvidia-cap21 and nvidia-cap22 as GPU 0's instance 2 and its compute instance 0."""
    base = 3 + gpu * GIS_PER_GPU * CAP_MINORS_PER_GI + gi_id * CAP_MINORS_PER_GI
    return base if ci_id is None else base + 1 + ci_id


def unknown_profiles(gpu: MigGpu, layout: dict[str, int]) -> list[str]:
    return [name for name in layout if gpu.profile(name) is None]


def compute_slices(gpu: MigGpu, layout: dict[str, int]) -> int:
    """The compute slices a layout's known profiles take."""
    return sum(p.compute_slices * n for name, n in layout.items() if (p := gpu.profile(name)))


def place(gpu: MigGpu, layout: dict[str, int]) -> list[Placement] | None:
    """Instances for `layout` (profile -> count) on one GPU, largest first, or None when they do
    not fit (too many compute slices, or no placement without overlapping memory slices)."""
    wanted = sorted(
        (p for name, n in layout.items() if (p := gpu.profile(name)) for _ in range(n)),
        key=lambda p: (-p.memory_slices, -p.compute_slices, p.name),
    )
    if compute_slices(gpu, layout) > COMPUTE_SLICES:
        return None
    return _search(wanted, 0, [])


def _search(wanted: list[MigProfile], used: int, done: list[Placement]) -> list[Placement] | None:
    if len(done) == len(wanted):
        return done
    profile = wanted[len(done)]
    for start in profile.placements:
        mask = ((1 << profile.memory_slices) - 1) << start
        if used & mask:
            continue
        found = _search(wanted, used | mask, [*done, Placement(profile, start)])
        if found is not None:
            return found
    return None


def describe(layout: dict[str, int]) -> str:
    return " + ".join(f"{name} x{n}" for name, n in layout.items())


def mig_placements(partition: PartitionSpec, sku: Sku, cat: Catalog) -> list[Placement]:
    """The partition's MIG instances on each GPU (the spec rules refused a layout that does not
    fit; LookupError here means they were not run)."""
    gpu = cat.mig(sku)
    found = place(gpu, partition.sharing.mig) if gpu and partition.sharing else None
    if found is None:
        raise LookupError(f"partition {partition.name}: no MIG layout that fits {sku.name}")
    return found
