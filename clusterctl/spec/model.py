"""The cluster spec: one frozen pydantic model for a stack's `gpu-clusters:cluster` object.

Structure and types are checked here; rules that span fields or need the catalog live in
clusterctl/spec/rules*.py, so each can report the field as the user wrote it.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

from clusterctl.constants import DRAIN_PREFIX, NCCL_MAX_BYTES, NCCL_MIN_BYTES
from clusterctl.nccl.judge import PEER_FLOOR
from clusterctl.nccl.units import SIZE_PATTERN, SYNTAX, normalize_size

CONFIG_NAMESPACE = "gpu-clusters"
CONFIG_KEY = f"{CONFIG_NAMESPACE}:cluster"
DEFAULT_IDLE_MINUTES = 15
"""An ND VM takes minutes to start (up to 20; docs/decisions/0001): suspending after 15 idle minutes
keeps a burst of short jobs from cycling nodes, and an idle 8-GPU node bills a quarter hour at
most."""


class Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
    )


def _cidr(value: str) -> str:
    try:
        return str(ipaddress.ip_network(value, strict=True))
    except ValueError as exc:
        raise ValueError(f"'{value}' is not a CIDR block like 10.40.0.0/16 ({exc})") from None


def _ipv4_cidr(value: str) -> str:
    if ipaddress.ip_network(value).version != 4:
        raise ValueError(f"'{value}' is IPv6; the cluster's networks are IPv4 (e.g. 10.40.0.0/16)")
    return value


Cidr = Annotated[str, AfterValidator(_cidr)]
Ipv4Cidr = Annotated[str, AfterValidator(_cidr), AfterValidator(_ipv4_cidr)]
ByteSize = Annotated[
    str,
    BeforeValidator(normalize_size),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": SIZE_PATTERN},
                {"type": "integer", "minimum": 1},
            ],
            "description": f"A message size: {SYNTAX}.",
        }
    ),
]
"""A message size (clusterctl.nccl.units), checked and respelt for nccl-tests: 1.5G -> 1536M."""
Name = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,14}$")]
ClusterName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{1,22}[a-z0-9]$")]


class SshSpec(Model):
    admin_user: Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_-]{0,31}$")] = "azureuser"
    public_key: str | None = None
    """OpenSSH public key. Unset: the program makes a key pair (private key: a secret output)."""
    allowed_cidrs: tuple[Cidr, ...] = ()
    """Who may reach SSH on the scheduler (or the jump host)."""
    allow_world_open: Annotated[bool, Strict()] = False
    """Must be true to accept 0.0.0.0/0 or ::/0 in allowedCidrs."""
    access: Literal["direct", "jumphost"] = "direct"
    """direct: the scheduler has a public IP; jumphost: only a small jump VM has one."""


class NetworkSpec(Model):
    address_space: Ipv4Cidr = "10.40.0.0/16"
    scheduler_subnet: Ipv4Cidr | None = None
    """Default: the first /24 of addressSpace."""
    compute_subnet: Ipv4Cidr | None = None
    """Default: the second half of addressSpace."""


class PartitionSpec(Model):
    name: Name
    sku: str
    nodes: Annotated[int, Strict()] = Field(ge=1, le=4096)
    spot: Annotated[bool, Strict()] = False
    image: str | None = None
    """Override of the node image: an Azure URN publisher:offer:sku:version, or an AMI id."""
    fabric: Literal["auto", "infiniband", "efa", "none"] = "auto"
    """auto: the SKU's own fabric; naming one the SKU lacks is an error."""
    default: Annotated[bool, Strict()] = False
    zones: tuple[str, ...] = ()
    capacity_reservation_id: str | None = None
    capacity_block: Annotated[bool, Strict()] = False
    idle_minutes: Annotated[int, Strict()] = Field(default=DEFAULT_IDLE_MINUTES, ge=0, le=10080)
    """Slurm: minutes a node stays idle before it is deallocated (compute billing stops; the
    instance and its name survive) and started again on demand. 0: never suspend."""
    min_nodes: Annotated[int, Strict()] = Field(default=0, ge=0, le=4096)
    """Slurm: nodes of this partition kept powered up even when idle (SuspendExcNodes).
    Kubernetes: the cluster autoscaler's minimum (0: the GPU nodes scale to zero when idle;
    `nodes` is the maximum). Reserved capacity (an ODCR or a capacity block) keeps `nodes`."""
    max_nodes_per_scale_set: Annotated[int, Strict()] = Field(default=100, ge=1, le=100)
    """Azure Slurm: VMs per scale set (one InfiniBand fabric each); sets fill in order, pg0 first.
    Fixed once the partition is deployed: changing it would move nodes between sets."""


class HeadNodeSpec(Model):
    sku: str | None = None
    """Default: Standard_D8s_v5 on Azure, m6i.2xlarge on AWS."""
    image: str | None = None
    """Slurm on Azure: the scheduler's (and jump host's) image, an Azure URN with its version
    pinned; default: config/images.yaml azure.scheduler (version `latest`)."""
    accounting: Annotated[bool, Strict()] = False
    """Run slurmdbd (+ MariaDB) for job accounting."""


class LoginNodesSpec(Model):
    count: Annotated[int, Strict()] | None = Field(default=None, ge=0, le=10)
    """Login VMs where users land and submit; unset: 1 on a cluster with users, else 0."""
    sku: str | None = None
    """Unset: the head node's."""
    entra_id_group: (
        Annotated[
            str,
            StringConstraints(
                pattern=r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
            ),
        ]
        | None
    ) = None
    """An Entra ID group's object id: its members log in to the login nodes with their Entra
    accounts (`az ssh vm`), by the AADSSHLoginForLinux extension and the built-in role Virtual
    Machine User Login on each login VM."""


class StorageSpec(Model):
    kind: Literal["scheduler-nfs", "azure-files-nfs", "none"] = "scheduler-nfs"
    size_gib: Annotated[int, Strict()] = Field(default=1024, ge=32, le=65536)
    keep_on_destroy: Annotated[bool, Strict()] = True
    """Protect the disk holding /home and /sched: `pulumi destroy` keeps it unless false."""


class HealthChecksSpec(Model):
    enabled: Annotated[bool, Strict()] = True
    interval_seconds: Annotated[int, Strict()] = Field(default=300, ge=30, le=86400)
    drain_prefix: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,16}:$")] = (
        DRAIN_PREFIX
    )
    """Drain reasons start with this; only such drains are resumed automatically."""
    deep_interval_hours: Annotated[int, Strict()] = Field(default=24, ge=0, le=720)
    """The deep tier (Azure's slow GPU and fabric checks) on every idle node, as an exclusive
    job, this often; 0 never."""


class NcclValidationSpec(Model):
    on_deploy: Annotated[bool, Strict()] = False
    on_failure: Literal["fail", "warn"] = "fail"
    min_bytes: ByteSize = NCCL_MIN_BYTES
    max_bytes: ByteSize = NCCL_MAX_BYTES
    fail_below_gbps: Annotated[float, Strict()] | None = Field(default=None, gt=0)
    warn_below_gbps: Annotated[float, Strict()] | None = Field(default=None, gt=0)
    peer_floor: Annotated[float, Strict()] = Field(default=PEER_FLOOR, gt=0, lt=1)
    """A 2-node pair below this share of the other pairs' median is re-run once, and named (the
    run fails) when the re-run is below it too."""
    container_image: str | None = None
    """Run nccl-tests in this container through pyxis (Slurm) instead of the host build."""
    timeout_minutes: Annotated[int, Strict()] = Field(default=30, ge=1, le=720)


class ValidationSpec(Model):
    nccl: NcclValidationSpec = NcclValidationSpec()


class SharedFilesystemSpec(Model):
    kind: Literal["lustre"] = "lustre"
    """lustre: FSx for Lustre (PERSISTENT_2, SSD) on EKS; Azure Managed Lustre is not built yet."""
    size_gib: Annotated[int, Strict()] = Field(default=1200, ge=1200, le=1_000_000)
    """FSx for Lustre PERSISTENT_2: 1200, 2400, or a multiple of 2400 GiB."""
    throughput_mbps_per_tib: Annotated[int, Strict()] = 125
    """MB/s per TiB of storage; FSx for Lustre PERSISTENT_2: 125, 250, 500 or 1000."""
    keep_on_destroy: Annotated[bool, Strict()] = True
    """Protect the file system: `pulumi destroy` (and `clusterctl down`) keep it unless false."""


def _kubernetes_version(value: Any) -> Any:
    """A version is MAJOR.MINOR (EKS and AKS) or MAJOR.MINOR.PATCH (AKS), written as a string:
    YAML reads an unquoted 1.30 as the number 1.3."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f'{value!r} is a number: write the version as a string, e.g. "1.35" in the stack '
            "file (YAML reads 1.30 as 1.3), or --set 'kubernetes.version=\"1.35\"'"
        )
    if isinstance(value, str) and not re.fullmatch(r"1\.\d{1,2}(\.\d{1,3})?", value):
        raise ValueError(
            f"'{value}' is not a Kubernetes version: MAJOR.MINOR like \"1.35\" (AKS also takes "
            'a patch, "1.35.6")'
        )
    return value


class KubernetesSpec(Model):
    version: Annotated[str | None, BeforeValidator(_kubernetes_version)] = None
    """MAJOR.MINOR (AKS also MAJOR.MINOR.PATCH); default: config/versions.yaml kubernetes."""
    gpu_driver: Literal["managed", "gpu-operator"] = "gpu-operator"
    """managed: the cloud's GPU driver on the node image; gpu-operator: NVIDIA's operator."""
    kueue: Annotated[bool, Strict()] = False
    dcgm_exporter: Annotated[bool, Strict()] = True
    monitoring: Annotated[bool, Strict()] = True
    """Prometheus in the cluster (namespace `monitoring`) collecting the DCGM exporter, a
    node_exporter on every node and kube-state-metrics, with the alert rules; see README
    "Monitoring a Kubernetes cluster"."""
    system_nodes: Annotated[int, Strict()] = Field(default=2, ge=1, le=20)
    admin_principal_arns: tuple[str, ...] = ()
    """EKS only: the IAM roles/users that get cluster admin (access entries). Empty: the role
    running `pulumi up`, by its issuer ARN with its path (SSO roles live under a path)."""
    shared_filesystem: SharedFilesystemSpec | None = None
    """A Lustre file system every pod of the training namespace mounts by one claim name
    (clusterctl/spec/lustre.py); unset: none."""


UserName = Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_-]{0,31}$")]


class QosSpec(Model):
    name: Name
    priority: Annotated[int, Strict()] = Field(default=0, ge=0, le=1_000_000)
    """Added to a job's priority through PriorityWeightQOS (the highest QoS priority scores 1)."""
    max_wall_minutes: Annotated[int, Strict()] | None = Field(default=None, ge=1, le=525_600)
    max_gpus_per_user: Annotated[int, Strict()] | None = Field(default=None, ge=1)


DEFAULT_QOS = (
    QosSpec(name="normal"),
    QosSpec(name="high", priority=100),
    QosSpec(name="debug", priority=200, max_wall_minutes=30, max_gpus_per_user=8),
)
"""normal for everyone; debug jumps the queue for short, small jobs; high is given per account."""


class AccountSpec(Model):
    name: Name
    fairshare: Annotated[int, Strict()] = Field(default=1, ge=1, le=65_533)
    """The account's share of the cluster, relative to its siblings' (Slurm's Fairshare)."""
    gpu_limit: Annotated[int, Strict()] | None = Field(default=None, ge=1)
    """GPUs the account's running jobs may hold at once (GrpTRES=gres/gpu=N); more pend."""
    qos: tuple[Name, ...] = ("normal", "debug")
    """QoS its users may ask for; the first is their default."""


class UserSpec(Model):
    name: UserName
    uid: Annotated[int, Strict()] = Field(ge=2000, le=59_999)
    """The same uid (and a group of the same number and name) on every node."""
    ssh_public_keys: tuple[str, ...] = Field(min_length=1)
    account: Name
    admin: Annotated[bool, Strict()] = False
    """In the sudo group on every node."""


class ClusterSpec(Model):
    name: ClusterName
    cloud: Literal["azure", "aws"]
    region: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]{3,40}$")]
    scheduler: Literal["slurm", "kubernetes"]
    ssh: SshSpec = SshSpec()
    network: NetworkSpec = NetworkSpec()
    head_node: HeadNodeSpec = HeadNodeSpec()
    login_nodes: LoginNodesSpec = LoginNodesSpec()
    partitions: tuple[PartitionSpec, ...] = Field(min_length=1)
    storage: StorageSpec = StorageSpec()
    health_checks: HealthChecksSpec = HealthChecksSpec()
    validation: ValidationSpec = ValidationSpec()
    kubernetes: KubernetesSpec = KubernetesSpec()
    accounts: tuple[AccountSpec, ...] = ()
    users: tuple[UserSpec, ...] = ()
    """The team (Slurm clusters): `clusterctl users add/remove` changes it on a live cluster."""
    qos: tuple[QosSpec, ...] = DEFAULT_QOS
    tags: dict[str, str] = Field(default_factory=dict)

    @property
    def total_nodes(self) -> int:
        return sum(p.nodes for p in self.partitions)

    @property
    def default_partition(self) -> PartitionSpec:
        return next((p for p in self.partitions if p.default), self.partitions[0])


def field_path(*parts: str | int) -> str:
    """`field_path('partitions', 0, 'sku')` -> 'gpu-clusters:cluster.partitions[0].sku'."""
    out = CONFIG_KEY
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def default_of(model: type[BaseModel], name: str) -> Any:
    """A field's default as the model declares it: code that needs it reads it here, never again
    as a literal."""
    return model.model_fields[name].get_default(call_default_factory=True)
