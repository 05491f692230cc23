"""The SKU catalog: config/*.yaml loaded into typed, frozen objects.

Every number in the catalog carries its source; the loader refuses a baseline or price without one.
"""

from __future__ import annotations

import difflib
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from clusterctl.clouds import name_type
from clusterctl.errors import UserError
from clusterctl.project import config_dir

if TYPE_CHECKING:
    CloudName = str
else:
    # Built when this module is first imported, from the clouds registered then
    CloudName = name_type()


class _Entry(BaseModel):
    # defer_build: the validators are built on first validation, not at import, so a command that
    # gets its catalog from the cache below never pays for them.
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        defer_build=True,
    )


def _sourced(value: str) -> str:
    if not value or not value.strip():
        raise ValueError("needs a non-empty source")
    return value


class FabricProof(_Entry):
    """What NCCL's INFO lines show on every healthy host of the size (clusterctl.nccl.fabric):
    `validate --nccl` fails a host that shows less."""

    devices: int = Field(ge=1)
    """Fabric devices NCCL lists per host: IB HCAs in `NET/IB : Using [0]mlx5_ib0:1/IB ...`, or
    the EFA NICs of aws-ofi-nccl's `Selected Provider is efa (found N nics)`."""
    device_prefix: str | None = None
    """The devices are named this plus 0..devices-1 (`mlx5_ib`), so a missing one is named."""
    gdr: bool
    """GPUDirect RDMA expected: every network channel `via NET/.../GDRDMA`."""
    source: str
    note: str | None = None

    _check_source = field_validator("source")(_sourced)


class Fabric(_Entry):
    kind: Literal["infiniband", "efa", "none"]
    generation: str | None = None
    nics: int = 0
    gbps_per_nic: float | None = None
    gdr_floor_gbps: float | None = Field(default=None, alias="gdrFloorGbps", gt=0)
    """GPUDirect RDMA loopback floor per HCA (Azure's check_ib_bw_gdr), InfiniBand only."""
    gdr_floor_source: str | None = None
    nccl: FabricProof | None = None
    """What NCCL should see of this fabric on each host; required of InfiniBand and EFA."""
    source: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _gdr_floor_sourced(self) -> Fabric:
        if self.gdr_floor_gbps is not None and not (self.gdr_floor_source or "").strip():
            raise ValueError("gdrFloorGbps needs a gdrFloorSource")
        return self

    @model_validator(mode="after")
    def _nccl_proof(self) -> Fabric:
        if self.kind == "none":
            if self.nccl is not None:
                raise ValueError("fabric.nccl given for kind none: remove it (no fabric to see)")
            return self
        if self.nccl is None:
            raise ValueError(
                f"fabric.nccl missing for kind {self.kind}: give devices (what NCCL lists per "
                "host), gdr (GPUDirect RDMA expected) and source"
            )
        if self.nics and self.nccl.devices > self.nics:
            raise ValueError(
                f"fabric.nccl.devices {self.nccl.devices} is more than fabric.nics {self.nics}"
            )
        return self


class Baseline(_Entry):
    """all_reduce_perf bus bandwidth (GB/s) at one message size, with where it comes from."""

    expected_gbps: float | None = Field(default=None, alias="expectedGBps", gt=0)
    expected_basis: Literal["measured", "derived"] = "measured"
    """`derived`: no published figure; rails x link rate x a stated efficiency (`derivation`)."""
    derivation: str | None = None
    """The arithmetic and reasoning behind a derived expected figure."""
    fail_below_gbps: float | None = Field(default=None, alias="failBelowGBps", gt=0)
    warn_below_gbps: float | None = Field(default=None, alias="warnBelowGBps", gt=0)
    levels_note: str | None = None
    """Why the warn and fail lines sit where they do against the expected figure."""
    message_bytes: int | None = None
    curve_gbps: dict[int, float] | None = Field(default=None, alias="curveGBps")
    """Measured busbw at sizes below message_bytes (bytes -> GB/s), from the same source: the
    baseline's shape, so a sweep that stops short is judged at the sizes it measured."""
    source: str
    note: str | None = None

    _check_source = field_validator("source")(_sourced)

    @model_validator(mode="after")
    def _levels_in_order(self) -> Baseline:
        if self.expected_basis == "derived" and not (self.derivation or "").strip():
            raise ValueError("expectedBasis derived needs a derivation (rails x rate x efficiency)")
        if self.expected_basis == "derived" and self.expected_gbps is None:
            raise ValueError("expectedBasis derived needs expectedGBps")
        fail, warn, expected = self.fail_below_gbps, self.warn_below_gbps, self.expected_gbps
        if fail is not None and warn is not None and warn < fail:
            raise ValueError(f"warnBelowGBps {warn:g} is below failBelowGBps {fail:g}: swap them")
        top = warn if warn is not None else fail
        if expected is not None and top is not None and top > expected:
            raise ValueError(
                f"{'warnBelowGBps' if warn is not None else 'failBelowGBps'} {top:g} is above "
                f"expectedGBps {expected:g}: a healthy run would not pass"
            )
        return self

    @field_validator("curve_gbps")
    @classmethod
    def _curve_positive(cls, value: dict[int, float] | None) -> dict[int, float] | None:
        if value is not None and any(size <= 0 or bw <= 0 for size, bw in value.items()):
            raise ValueError("curve sizes and figures must be positive")
        return value


class NcclBaselines(_Entry):
    single_node: Baseline | None = None
    multi_node: Baseline | None = None
    """2+ nodes with NCCL_ALGO=Ring: the network check."""
    multi_node_default: Baseline | None = None
    """2+ nodes with NCCL's own algorithm choice (NCCL_ALGO unset: NVLS-Tree, Tree, SHARP), where
    a figure for it is published (or derived from one, labelled); None: that run is reported but
    not judged."""


class Price(_Entry):
    usd_per_hour: float | None = Field(default=None, gt=0)
    """None where no on-demand price is published (e.g. capacity-block-only types)."""
    region: str
    as_of: str
    source: str
    note: str | None = None

    _check_source = field_validator("source")(_sourced)


class ServicePrice(_Entry):
    """A billed service that is not a VM (config/services.yaml)."""

    title: str
    usd_per_hour: float | None = Field(default=None, gt=0)
    usd_per_gb_processed: float | None = Field(default=None, alias="usdPerGbProcessed", gt=0)
    usd_per_gb_month: float | None = Field(default=None, alias="usdPerGbMonth", gt=0)
    """Storage billed by its provisioned size (a file system), prorated by the hour."""
    region: str
    as_of: str
    source: str

    _check_source = field_validator("source")(_sourced)

    @model_validator(mode="after")
    def _one_rate(self) -> ServicePrice:
        if (self.usd_per_hour is None) == (self.usd_per_gb_month is None):
            raise ValueError("give usdPerHour or usdPerGbMonth, one of them")
        return self


class GuestMemory(_Entry):
    """What the guest OS sees (/proc/meminfo MemTotal), which is less than the size page says."""

    mem_total_ki_b: int = Field(alias="memTotalKiB", gt=0)
    tolerance_percent: float = Field(ge=0, lt=50)
    """The fudge Azure's own check_hw_physmem allows below MemTotal."""
    source: str

    _check_source = field_validator("source")(_sourced)


class NodeShape(_Entry):
    """What one VM of a GPU size is, beyond its GPU count (`Sku.gpus`): everything that renders
    differently on an 8-GPU x86 HGX VM and on a 4-GPU Grace (arm64) VM of an NVL72 rack."""

    cpu_arch: Literal["x86_64", "arm64"]
    sockets: int | None = Field(default=None, ge=1)
    """CPU sockets (Slurm's SocketsPerBoard); None: unverified, and then no Slurm partition."""
    nvlink_domain_gpus: int = Field(ge=1)
    """GPUs one NVLink domain joins: the VM's own GPUs on an HGX board, 72 across an NVL72 rack."""
    fabric_manager: bool
    """nvidia-fabricmanager runs on the VM (HGX NVSwitch boards); NVL72 compute trays run none."""
    imex: bool
    """NVIDIA IMEX (memory export across the nodes of one NVLink domain) and its channel device."""
    image_family: str
    """Key of config/images.yaml <cloud>.gpuNodes.families: the image built for this shape."""
    source: str
    note: str | None = None

    _check_source = field_validator("source")(_sourced)


# Without a measured guest size: 95% of the advertised memory (Azure/cyclecloud-slurm's default).
ADVERTISED_MEMORY_HEADROOM = 0.95


class Sku(_Entry):
    name: str
    cloud: CloudName
    family: str
    gpus: int = Field(ge=0)
    gpu_model: str | None = None
    gpu_memory_gi_b: int | None = Field(default=None, alias="gpuMemoryGiB")
    vcpus: int
    memory_gi_b: float = Field(alias="memoryGiB")
    guest_memory: GuestMemory | None = None
    local_nvme_disks: int | None = None
    resource_disk_gi_b: int | None = Field(default=None, ge=0, alias="resourceDiskGiB")
    """Azure's resource (temp) disk, which cloud-init's Azure datasource names ephemeral0 and mounts
    at /mnt (the sandbox gives such a node one too); 0: none; null: unverified."""
    resource_disk_source: str | None = None
    gen2_only: bool | None = None
    fabric: Fabric
    nccl_profile: str | None = None
    nccl: NcclBaselines | None = None
    price: Price
    node: NodeShape | None = None
    """Required of a GPU size: nothing about its shape is assumed."""
    note: str | None = None

    @model_validator(mode="after")
    def _resource_disk_sourced(self) -> Sku:
        if self.resource_disk_gi_b and not (self.resource_disk_source or "").strip():
            raise ValueError("resourceDiskGiB needs a resourceDiskSource")
        return self

    @model_validator(mode="after")
    def _gpu_sizes_have_a_shape(self) -> Sku:
        if self.gpus and self.node is None:
            raise ValueError(f"{self.name}: a GPU size needs a `node` shape (cpuArch, ...)")
        if self.node and self.node.nvlink_domain_gpus % max(self.gpus, 1):
            raise ValueError(f"{self.name}: node.nvlinkDomainGpus is not a multiple of gpus")
        return self

    @property
    def shape(self) -> NodeShape:
        """The node shape of a GPU size (LookupError for a size without one)."""
        if self.node is None:
            raise LookupError(f"config/skus.yaml {self.name}: no node shape")
        return self.node

    @property
    def gpu_device_files(self) -> str:
        """gres.conf File= for the node's GPUs (a Slurm hostlist range: /dev/nvidia[0-3])."""
        return f"/dev/nvidia[0-{self.gpus - 1}]" if self.gpus > 1 else "/dev/nvidia0"

    @property
    def nodes_per_nvlink_domain(self) -> int:
        """VMs one NVLink domain spans: 1 on an HGX VM, 18 for a 4-GPU VM of an NVL72 rack."""
        return self.shape.nvlink_domain_gpus // self.gpus if self.gpus else 1

    @property
    def cores_per_socket(self) -> int:
        sockets = self.shape.sockets
        if not sockets:
            raise LookupError(f"config/skus.yaml {self.name}: node.sockets unverified")
        return self.vcpus // sockets

    @property
    def gres_type(self) -> str | None:
        return self.gpu_model.lower() if self.gpu_model else None

    @property
    def memory_mib(self) -> int:
        return int(self.memory_gi_b * 1024)

    @property
    def real_memory_mib(self) -> int:
        """Slurm's RealMemory: the lowest MemTotal Azure's memory check still calls healthy, so a
        node that passes it also registers (a RealMemory above what slurmd sees makes it INVAL)."""
        if self.guest_memory is None:
            return int(self.memory_mib * ADVERTISED_MEMORY_HEADROOM)
        g = self.guest_memory
        return int(g.mem_total_ki_b * (1 - g.tolerance_percent / 100) // 1024)

    def baseline(self, nodes: int, *, default_algorithm: bool = False) -> Baseline | None:
        """The figures a run on `nodes` is judged against: one node is NVLink (NCCL's default
        algorithm); 2+ nodes Ring, or with `default_algorithm` NCCL's own choice."""
        if self.nccl is None:
            return None
        if nodes <= 1:
            return self.nccl.single_node
        return self.nccl.multi_node_default if default_algorithm else self.nccl.multi_node


class NcclProfile(_Entry):
    env: dict[str, str]
    topo_file: str | None = None
    source: str
    note: str | None = None

    _check_source = field_validator("source")(_sourced)


class Regions(_Entry):
    regions: tuple[str, ...]
    source: str

    _check_source = field_validator("source")(_sourced)


class MigProfile(_Entry):
    """One MIG GPU instance profile (NVIDIA's MIG user guide, Supported MIG Profiles)."""

    name: str = Field(pattern=r"^[1-7]g\.\d+gb$")
    compute_slices: int = Field(ge=1, le=7)
    memory_slices: int = Field(ge=1, le=8)
    placements: tuple[int, ...] = Field(min_length=1)
    """The memory slices an instance of this profile may start at (`nvidia-smi mig -lgipp`)."""


class MigGpu(_Entry):
    """The MIG profiles of one GPU model, matched to SKUs by gpuModel and gpuMemoryGiB."""

    name: str
    gpu_model: str
    gpu_memory_gi_b: int = Field(alias="gpuMemoryGiB")
    profiles: tuple[MigProfile, ...] = Field(min_length=1)
    source: str
    note: str | None = None

    _check_source = field_validator("source")(_sourced)

    @model_validator(mode="after")
    def _placements_inside(self) -> MigGpu:
        for p in self.profiles:
            if any(start < 0 or start + p.memory_slices > 8 for start in p.placements):
                raise ValueError(f"{self.name} {p.name}: a placement runs past memory slice 8")
        return self

    def profile(self, name: str) -> MigProfile | None:
        return next((p for p in self.profiles if p.name == name), None)


class Catalog(_Entry):
    skus: tuple[Sku, ...]
    mig_gpus: tuple[MigGpu, ...] = ()
    nccl_profiles: dict[str, NcclProfile] = Field(default_factory=dict)
    images: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, Any] = Field(default_factory=dict)
    regions: dict[str, Regions] = Field(default_factory=dict)
    services: dict[str, dict[str, ServicePrice]] = Field(default_factory=dict)

    def get(self, name: str, cloud: str | None = None) -> Sku | None:
        for sku in self.skus:
            if sku.name.lower() == name.lower() and (cloud is None or sku.cloud == cloud):
                return sku
        return None

    def require(self, name: str, *, field: str = "--sku", cloud: str | None = None) -> Sku:
        """The SKU, or a UserError naming `field`, the closest name and where to look."""
        sku = self.get(name, cloud)
        if sku is not None:
            return sku
        close = difflib.get_close_matches(name, self.names(cloud, gpu_only=True), 1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        where = f" for {cloud}" if cloud else ""
        raise UserError(
            f"{field} {name}: not a GPU type in the catalog{where}; {hint}"
            "(`clusterctl catalog` lists them)"
        )

    def names(self, cloud: str | None = None, *, gpu_only: bool = False) -> list[str]:
        return [
            s.name
            for s in self.skus
            if (cloud is None or s.cloud == cloud) and (not gpu_only or s.gpus > 0)
        ]

    def gpus_per_node(self, name: str | None, *, field: str = "--sku") -> int | None:
        """GPUs per node of a catalog size: None without a size or for a size with no GPUs (the
        one answer for every reader; no reader assumes 8)."""
        if name is None:
            return None
        return self.require(name, field=field).gpus or None

    def gpu_image(self, sku: Sku) -> dict[str, Any]:
        """The config/images.yaml entry of the SKU's image family (node.imageFamily)."""
        section = (self.images.get(sku.cloud) or {}).get("gpuNodes") or {}
        default = section.get("default", section)
        family = sku.shape.image_family
        found = default if default.get("family") == family else None
        found = found or (section.get("families") or {}).get(family)
        if not isinstance(found, dict):
            raise LookupError(
                f"config/images.yaml {sku.cloud}.gpuNodes: no image family {family!r}"
            )
        return found

    def profile(self, sku: Sku) -> NcclProfile | None:
        return self.nccl_profiles.get(sku.nccl_profile) if sku.nccl_profile else None

    def mig(self, sku: Sku) -> MigGpu | None:
        """The MIG profiles of the SKU's GPU; None: the GPU has no MIG (or none is catalogued)."""
        return next(
            (
                m
                for m in self.mig_gpus
                if m.gpu_model == sku.gpu_model and m.gpu_memory_gi_b == sku.gpu_memory_gi_b
            ),
            None,
        )


# libyaml's parser when PyYAML has it (the same safe constructor): the catalog is read by every
# command that judges bandwidth, and the pure-Python parser took ~0.1 s of `validate --from-log`.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.load(path.read_text(), Loader=_SAFE_LOADER) or {}
    except FileNotFoundError as exc:
        raise UserError(f"{path}: catalog file missing") from exc
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML ({exc.__class__.__name__})") from exc
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping at the top level")
    return data


def load_catalog(root: Path | None = None) -> Catalog:
    root = root or config_dir()
    skus = _read_yaml(root / "skus.yaml")
    raw = {
        "skus": skus.get("skus", []),
        "migGpus": skus.get("migGpus", []),
        "ncclProfiles": _read_yaml(root / "nccl_profiles.yaml").get("profiles", {}),
        "images": _read_yaml(root / "images.yaml"),
        "versions": _read_yaml(root / "versions.yaml"),
        "regions": _read_yaml(root / "regions.yaml"),
        "services": _read_yaml(root / "services.yaml"),
    }
    try:
        catalog = Catalog.model_validate(raw)
    except ValidationError as exc:
        raise UserError(
            [f"config/{_loc(e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)]
        ) from None
    missing = sorted(
        {s.nccl_profile for s in catalog.skus if s.nccl_profile} - set(catalog.nccl_profiles)
    )
    if missing:
        raise UserError(f"config/nccl_profiles.yaml: profiles {missing} are used but not defined")
    problems = []
    for sku in catalog.skus:
        if sku.node is None:
            continue
        try:
            image = catalog.gpu_image(sku)
        except LookupError as exc:
            problems.append(f"{exc} (config/skus.yaml {sku.name} node.imageFamily)")
            continue
        if image.get("arch") != sku.node.cpu_arch:
            problems.append(
                f"config/skus.yaml {sku.name}: node.cpuArch {sku.node.cpu_arch} but image family "
                f"{sku.node.image_family!r} is {image.get('arch')}"
            )
    if problems:
        raise UserError(problems)
    return catalog


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


CATALOG_FILES = (
    "skus.yaml",
    "nccl_profiles.yaml",
    "images.yaml",
    "versions.yaml",
    "regions.yaml",
    "services.yaml",
)


def _cache_file(root: Path) -> Path | None:
    """Where the validated catalog of these exact files is kept (keyed by their bytes)."""
    import hashlib

    import pydantic

    from clusterctl import __version__

    digest = hashlib.sha256(f"{__version__} {pydantic.VERSION}".encode())
    digest.update(Path(__file__).read_bytes())  # the models the pickle holds, as this code has them
    for name in CATALOG_FILES:
        try:
            digest.update(name.encode() + b"\0" + (root / name).read_bytes())
        except OSError:
            return None  # load_catalog says what is missing
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "gpu-clusters" / f"catalog-{digest.hexdigest()[:20]}.pickle"


@cache
def catalog() -> Catalog:
    """The shipped catalog, loaded once per process; validated once per content (cached)."""
    import pickle

    path = _cache_file(config_dir())
    if path is not None and path.is_file():
        try:
            found = pickle.loads(path.read_bytes())
            if isinstance(found, Catalog):
                return found
        except Exception:  # a stale or damaged cache is rebuilt, never trusted
            pass
    cat = load_catalog()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps(cat))
            tmp.replace(path)
        except OSError:
            pass  # no writable cache: validate every time
    return cat
