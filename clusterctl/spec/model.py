"""The cluster spec: one frozen pydantic model for a stack's `gpu-clusters:cluster` object.

Structure and types are checked here; rules that span fields or need the catalog live in
clusterctl/spec/rules*.py, so each can report the field as the user wrote it.
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

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

from clusterctl.clouds import name_type
from clusterctl.constants import DRAIN_PREFIX, NCCL_MAX_BYTES, NCCL_MIN_BYTES
from clusterctl.nccl.judge import PEER_FLOOR
from clusterctl.nccl.units import SIZE_PATTERN, SYNTAX, normalize_size

if TYPE_CHECKING:
    CloudName = str
else:
    # Built when this module is first imported, from the clouds registered then
    CloudName = name_type()

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
    """The admin login, `a-z0-9_-`, at most 32; Azure's forbidden names (`admin`, `root`,
    `guest`, ...) are refused."""
    public_key: str | None = None
    """An `ssh-ed25519` or `ssh-rsa` OpenSSH public key whose body must parse. Unset: the program
    makes a key pair (the private key: the secret output `sshPrivateKey`)."""
    allowed_cidrs: tuple[Cidr, ...] = ()
    """Who may reach SSH on the scheduler (or the jump host); on Kubernetes stacks, who may reach
    the API server, where an empty list is refused. `0.0.0.0/0` is refused unless
    `ssh.allowWorldOpen: true`."""
    allow_world_open: Annotated[bool, Strict()] = False
    """The only way to accept `0.0.0.0/0` or `::/0` in `allowedCidrs`."""
    access: Literal["direct", "jumphost"] = "direct"
    """`direct`: the scheduler has a public IP; `jumphost`: only a small jump VM has one."""


class NetworkSpec(Model):
    address_space: Ipv4Cidr = "10.40.0.0/16"
    """The VNet/VPC range, IPv4, /22 or larger."""
    scheduler_subnet: Ipv4Cidr | None = None
    """Inside the address space, not overlapping the compute subnet. Default: the first /24 of
    `addressSpace`."""
    compute_subnet: Ipv4Cidr | None = None
    """Inside the address space, not overlapping the scheduler subnet; it must hold every node
    (Azure keeps 5 addresses). Default: the upper half of `addressSpace`."""


MigProfileName = Annotated[str, StringConstraints(pattern=r"^[1-7]g\.\d{1,3}gb$")]


class SharingSpec(Model):
    mig: dict[MigProfileName, Annotated[int, Strict(), Field(ge=1, le=7)]] = Field(
        default_factory=dict
    )
    """The MIG layout of every GPU of the partition or node pool, profile -> instances, e.g.
    `{"1g.10gb": 7}` or `{"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}`. Profiles are the SKU's GPU's
    (`config/skus.yaml` `migGpus`, from NVIDIA's MIG user guide); the instances must fit one GPU
    by NVIDIA's placement rules (7 compute and 8 memory slices). Not with `shards`. Slurm: a boot
    step applies it before slurmd on every boot; each instance is a typed GPU
    (`--gres=gpu:1g.10gb:1`) that a job sees alone (cgroup device isolation); a slice counts as
    one GPU against an account's `gpuLimit` and as its share of the GPU's compute slices in fair
    share. Kubernetes (`gpuDriver: gpu-operator`): the GPU Operator's MIG manager applies it to
    the pool's nodes (label `nvidia.com/mig.config`), MIG strategy `mixed`, so a pod requests
    `nvidia.com/mig-1g.10gb: 1`; on AKS with `gpuDriver: managed` only one profile filling the
    GPU (`{1g.10gb: 7}`, `{3g.40gb: 2}`, ...), which the pool makes itself
    (`gpuInstanceProfile` MIG1g..MIG7g). docs/shared-gpus.md."""
    shards: Annotated[int, Strict()] | None = Field(default=None, ge=2, le=128)
    """Each whole GPU is shared by up to this many jobs or pods at once, without memory or fault
    isolation between them. Slurm: `gres/shard` (`--gres=shard:1`); a shard counts as 1/shards of
    a GPU in fair share, `gpuLimit` does not count shards. Kubernetes (`gpuDriver:
    gpu-operator`): the device plugin's time-slicing, `replicas` = shards, so each GPU is
    advertised as this many `nvidia.com/gpu` (label `nvidia.com/device-plugin.config`). Not with
    `mig`."""


class PartitionSpec(Model):
    name: Name
    """The Slurm partition / node pool name, `a-z0-9`, at most 15; not `default` (Slurm reserves
    it)."""
    sku: str
    """A GPU type from `clusterctl catalog` for the stack's cloud."""
    nodes: Annotated[int, Strict()] = Field(ge=1, le=4096)
    """1-4096. Azure: more than `maxNodesPerScaleSet` become several scale sets, one InfiniBand
    fabric each, filled in order (`pg0` full, then `pg1`, ...): growing only grows the last set or
    opens a new one, shrinking takes the highest names."""
    spot: Annotated[bool, Strict()] = False
    """Spot/low-priority VMs (a warning for multi-node jobs); not with a capacity reservation.
    The trade: far cheaper, but Azure may evict a VM at any time with 30 s notice. An evicted VM
    is deallocated, not deleted (it keeps its name). The node watches Azure Scheduled Events,
    drains itself and requeues its job onto other nodes, then powers down; Slurm starts it again
    when a job needs it, if Azure has capacity (if not, it is set DOWN with a `gpucl: power:`
    reason). A job that is running on it starts again from the beginning unless it saves
    checkpoints."""
    image: str | None = None
    """Image override: an Azure URN `publisher:offer:sku:version`, an Azure Compute Gallery image
    version id (`/subscriptions/.../galleries/G/images/I/versions/V`), or an AMI id `ami-...`.
    Unset: the catalog's (`config/images.yaml`, a dated version; `clusterctl images -s STACK`
    shows each role's and how to move it)."""
    fabric: Literal["auto", "infiniband", "efa", "none"] = "auto"
    """`auto`: the SKU's own fabric. A fabric the SKU lacks is refused, and so is `none` on a
    Slurm partition whose SKU has one."""
    default: Annotated[bool, Strict()] = False
    """The default Slurm partition; at most one (unset everywhere: the first)."""
    zones: tuple[str, ...] = ()
    """AWS only: zones of the region (`us-east-1a`); one zone for EFA node groups."""
    capacity_reservation_id: str | None = None
    """AWS only: a capacity reservation, `cr-` + 17 hex digits."""
    capacity_block: Annotated[bool, Strict()] = False
    """AWS only: the reservation is a capacity block; needs `capacityReservationId`."""
    idle_minutes: Annotated[int, Strict()] = Field(default=DEFAULT_IDLE_MINUTES, ge=0, le=10080)
    """Slurm: minutes a node stays idle before it is deallocated (compute billing stops; the VM
    and its name survive); a job that needs it starts it again (minutes, like a new ND VM). `0`:
    never suspend."""
    min_nodes: Annotated[int, Strict()] = Field(default=0, ge=0, le=4096)
    """Slurm: nodes of this partition kept powered up even when idle (`SuspendExcNodes`); at most
    `nodes`; needs `idleMinutes` above 0. Kubernetes: the GPU node group's cluster autoscaler
    minimum (0: the GPU nodes scale to zero when idle; `nodes` is the maximum); refused in
    reserved capacity (an ODCR or a capacity block), which keeps `nodes`."""
    max_nodes_per_scale_set: Annotated[int, Strict()] = Field(default=100, ge=1, le=100)
    """Azure Slurm: VMs per scale set, so per InfiniBand domain (a scale set with one placement
    group holds at most 100); sets fill in order, `pg0` first. Fixed once the partition is
    deployed (`up` refuses a change: it would move nodes between sets)."""
    sharing: SharingSpec | None = None
    """Share the partition's (node pool's) GPUs between jobs, by MIG slices (`mig`) or by shards
    (`shards`); jobs then share nodes instead of getting whole ones (docs/shared-gpus.md).
    Unset: every job gets whole nodes."""


class HeadNodeSpec(Model):
    sku: str | None = None
    """The scheduler (Slurm) or system node type, from the catalog. Default: `Standard_D8s_v5` on
    Azure, `m6i.2xlarge` on AWS."""
    image: str | None = None
    """Slurm on Azure: the image of the scheduler, the login nodes and the jump host, an Azure
    URN with its version pinned or a gallery image version id (a new pin replaces those VMs:
    docs/power.md, "Replacing the scheduler or a login node"). Default: `config/images.yaml`
    `azure.scheduler` (a dated version)."""
    accounting: Annotated[bool, Strict()] = False
    """Slurm only: job accounting. slurmdbd and MariaDB on the scheduler, the database on its data
    disk (it survives a reimage), the password generated and kept as a Pulumi secret, MariaDB
    tuned as Slurm's accounting guide says (`innodb_buffer_pool_size` 4096M,
    `innodb_log_file_size` 64M, `innodb_lock_wait_timeout` 900); `sacct` lists every job. The
    admin user is associated with account `users`, so `sreport job sizesbyaccount` reports its
    jobs. Associations, limits and QoS are enforced
    (`AccountingStorageEnforce=associations,limits,qos,safe`) and priority is
    `priority/multifactor` with fair share: a user needs an association to run jobs (declare them
    under `users`: docs/team.md). Needed by `users` and `accounts`; fixed once deployed."""


class LoginNodesSpec(Model):
    count: Annotated[int, Strict()] | None = Field(default=None, ge=0, le=10)
    """Slurm on Azure: login VMs (`<cluster>-login-<n>`) where users land and submit, in the
    scheduler's subnet, with a public IP when `ssh.access: direct`, no managed identity; `/home`
    and `/sched` mounted, Slurm's commands configless (`sackd`), pyxis built. With any, the
    scheduler lets only the admin user log in (`AllowUsers`). Output `loginAddresses`;
    `clusterctl status` prints the team's ssh line. 0-10; unset: 1 on a cluster with `users`,
    else 0."""
    sku: str | None = None
    """The login VMs' size; unset: the head node's."""
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
    Machine User Login for that group on each login VM (which gets a system identity with no
    role)."""


class BackupSpec(Model):
    """Azure Backup of the scheduler's data disk (/sched, Slurm's state, the accounting database,
    and /home unless an Azure Files share holds it): a Backup vault takes an incremental snapshot
    once a day into the snapshot resource group `rg-<name>-<stack>-snapshots` and deletes each one
    after `retentionDays` (Microsoft Learn, backup/backup-managed-disks). Restore:
    docs/azure-slurm.md, "Restoring /shared"."""

    enabled: Annotated[bool, Strict()] = True
    """Back the disk up daily; `false` takes no snapshots."""
    retention_days: Annotated[int, Strict()] = Field(default=7, ge=1, le=35)
    """How long each daily snapshot is kept, 1-35 days (the range Microsoft's disk-backup
    quickstart template accepts)."""
    hour_utc: Annotated[int, Strict()] = Field(default=2, ge=0, le=23)
    """The hour (UTC, 0-23) the daily backup starts."""


class ManagedLustreSpec(Model):
    """Azure Slurm only: an Azure Managed Lustre file system (AMLFS) in a subnet of its own,
    mounted on every GPU and login node (clusterctl/spec/lustre.py has each number's source)."""

    throughput_mbps_per_tib: Annotated[int, Strict()] = 125
    """The SKU `AMLFS-Durable-Premium-<N>`: 40, 125, 250 or 500 MB/s per TiB. Fixed when made."""
    size_tib: Annotated[int, Strict()] = Field(default=16, ge=4, le=12_500)
    """Storage in TiB, a multiple of the tier's step (and at least one step): 48 TiB at 40,
    16 at 125, 8 at 250, 4 at 500. Fixed when made."""
    mount_point: Annotated[str, StringConstraints(pattern=r"^/[a-z0-9_/-]{1,63}$")] = "/lustre"
    """Where the nodes mount it; not `/home`, `/sched` or a system folder."""
    subnet: Ipv4Cidr | None = None
    """The file system's own subnet, inside `network.addressSpace`, clear of the other subnets,
    as large as Microsoft's table asks for the size (/27 up to 16 TiB ... /23 up to 400 TiB).
    Default: the first such block of the address space's lower half after the scheduler's /24."""
    zone: Literal["1", "2", "3"] | None = None
    """The availability zone (a region with zones needs one); unset: none sent."""
    maintenance_day: Literal[
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"
    ] = "Sunday"
    """The weekly maintenance window's day (Azure requires a window)."""
    maintenance_time_utc: Annotated[
        str, StringConstraints(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    ] = "02:00"
    """The window's start, `HH:MM` UTC."""
    keep_on_destroy: Annotated[bool, Strict()] = True
    """Protect the file system: `pulumi destroy` (and `clusterctl down`) keep it unless false."""


class StorageSpec(Model):
    kind: Literal["scheduler-nfs", "azure-files-nfs", "none"] = "scheduler-nfs"
    """Where `/home` lives. `scheduler-nfs`: the scheduler exports its data disk (`/home` and
    `/sched`). `azure-files-nfs` (Azure): a premium FileStorage account with one NFS 4.1 share
    mounted at `/home` on every role (`vers=4,minorversion=1,sec=sys,nconnect=4`), reachable only
    through a private endpoint in the compute subnet (public access disabled, firewall deny, no
    shared keys, TLS 1.2; secure transfer off, which NFS requires), named through a
    `privatelink.file.core.windows.net` zone linked to the VNet; `/sched` stays on the scheduler's
    128 GiB disk. `none` is refused: Slurm needs `/home` and `/sched` on every node. The VM
    sandbox has no Azure Files stand-in yet and refuses it."""
    size_gib: Annotated[int, Strict()] = Field(default=1024, ge=32, le=65536)
    """The size of what holds `/home`: the data disk, 32 to 32,767 GiB (Azure Premium SSD), or
    the share, 100 to 65,536 GiB."""
    keep_on_destroy: Annotated[bool, Strict()] = True
    """Protect the data disk holding `/home` and `/sched` (and the Azure Files account and share,
    and the disk's backups) from `pulumi destroy`: it is kept unless false."""
    backup: BackupSpec = BackupSpec()
    """Azure Slurm: daily snapshots of the scheduler's data disk."""
    lustre: ManagedLustreSpec | None = None
    """Azure Slurm only: a fast shared file system for datasets and checkpoints (Azure Managed
    Lustre), mounted at `mountPoint` on the GPU and login nodes; unset: none. The VM sandbox has
    no Lustre and refuses it."""


class HealthChecksSpec(Model):
    enabled: Annotated[bool, Strict()] = True
    """Node health checks (Slurm's HealthCheckProgram running NHC; docs/azure-slurm.md)."""
    interval_seconds: Annotated[int, Strict()] = Field(default=300, ge=30, le=86400)
    """How often the fast tier runs, 30-86400 s."""
    drain_prefix: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,16}:$")] = (
        DRAIN_PREFIX
    )
    """The prefix (`word:`, at most 16) that marks the drains the check owns: drain reasons start
    with it, and only such drains are resumed automatically."""
    deep_interval_hours: Annotated[int, Strict()] = Field(default=24, ge=0, le=720)
    """Slurm only: the deep tier (Azure's slow GPU and fabric checks) on every idle node, as an
    exclusive job, this often, 0-720 hours; `0` turns it off."""


class NcclValidationSpec(Model):
    on_deploy: Annotated[bool, Strict()] = False
    """Run the NCCL acceptance test at the end of `pulumi up` (a Pulumi resource hook after the
    last scale set is created; the verdict shows in the update's output and `clusterctl up`
    prints it)."""
    on_failure: Literal["fail", "warn"] = "fail"
    """What a failed `onDeploy` test does: `fail` the update or `warn`."""
    min_bytes: ByteSize = NCCL_MIN_BYTES
    """The all_reduce_perf sweep's smallest size; sizes as nccl-tests reads them, 1024-based:
    `16G` = `16GB` = `16GiB`, `1.5G` = `1536M` (the same for `validate -b/-e`); not above
    `maxBytes`."""
    max_bytes: ByteSize = NCCL_MAX_BYTES
    """The all_reduce_perf sweep's largest size, read as `minBytes` is."""
    fail_below_gbps: Annotated[float, Strict()] | None = Field(default=None, gt=0)
    """Overrides the SKU's fail line (GB/s bus bandwidth); unset: the catalog's."""
    warn_below_gbps: Annotated[float, Strict()] | None = Field(default=None, gt=0)
    """Overrides the SKU's warn line (GB/s); unset: the catalog's; not below the fail line."""
    peer_floor: Annotated[float, Strict()] = Field(default=PEER_FLOOR, gt=0, lt=1)
    """Above 0, below 1: a 2-node pair below this share of the other pairs' median is re-run
    once, and fails the run (named) when the re-run is below it too (`validate --peer-floor`)."""
    container_image: str | None = None
    """Run nccl-tests in this container through pyxis (Slurm) instead of the host build."""
    timeout_minutes: Annotated[int, Strict()] = Field(default=30, ge=1, le=720)
    """1-720: how long the validation job may take."""


class ValidationSpec(Model):
    nccl: NcclValidationSpec = NcclValidationSpec()


class SharedFilesystemSpec(Model):
    kind: Literal["lustre"] = "lustre"
    """`lustre`: FSx for Lustre `PERSISTENT_2` (SSD) in the default partition's zone, on EKS.
    Refused on AKS (Azure Managed Lustre needs a subnet of its own, and the AKS cluster runs in
    the VNet AKS makes) and on Slurm stacks."""
    size_gib: Annotated[int, Strict()] = Field(default=1200, ge=1200, le=1_000_000)
    """FSx for Lustre PERSISTENT_2: 1200, 2400, or a multiple of 2400 GiB. Changes in place (FSx
    grows a file system, never shrinks one)."""
    throughput_mbps_per_tib: Annotated[int, Strict()] = 125
    """MB/s per TiB of storage; FSx for Lustre PERSISTENT_2: 125, 250, 500 or 1000. Changes in
    place."""
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


EntraObjectId = Annotated[
    str, StringConstraints(pattern=r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
]


class KubernetesSpec(Model):
    version: Annotated[str | None, BeforeValidator(_kubernetes_version)] = None
    """EKS/AKS only (the `kubernetes` keys are refused on Slurm stacks): the Kubernetes version,
    a quoted "MAJOR.MINOR" (AKS also "MAJOR.MINOR.PATCH"), at most two minors behind the one
    `config/versions.yaml` pins, which is the default."""
    gpu_driver: Literal["managed", "gpu-operator"] = "gpu-operator"
    """`managed`: the cloud's GPU driver on the node image; `gpu-operator`: NVIDIA's operator."""
    kueue: Annotated[bool, Strict()] = False
    """Kueue queues for the GPU jobs."""
    dcgm_exporter: Annotated[bool, Strict()] = True
    """NVIDIA's DCGM exporter on the GPU nodes."""
    monitoring: Annotated[bool, Strict()] = True
    """Prometheus in the cluster (namespace `monitoring`) collecting the DCGM exporter, a
    node_exporter on every node and kube-state-metrics, with the alert rules; see
    docs/monitoring.md, "Monitoring a Kubernetes cluster"."""
    system_nodes: Annotated[int, Strict()] = Field(default=2, ge=1, le=20)
    """1-20 system nodes."""
    admin_principal_arns: tuple[str, ...] = ()
    """EKS only: IAM role/user ARNs (`arn:aws:iam::<account>:role/<path/>name`, with the role's
    path; STS session ARNs refused) that get cluster admin (access entries). Unset: the role
    running `pulumi up`, by IAM's issuer ARN (SSO roles keep their
    `aws-reserved/sso.amazonaws.com/` path). The list replaces the deployer, so include the role
    that runs `up`."""
    private_api_server: Annotated[bool, Strict()] = False
    """The API server on a private address in the cluster's network only. EKS turns its public
    endpoint off and lets `ssh.allowedCidrs` in on port 443; AKS makes a private cluster (its
    name still resolves in public DNS, to the private address). `ssh.allowedCidrs` must then be
    the private ranges (VPN, peering, Direct Connect/ExpressRoute) that `up`, kubectl and
    `validate` run from, connected to `network.addressSpace` (EKS) or AKS's VNet before `up`
    installs the add-ons through it. Unset: a public endpoint open only to `ssh.allowedCidrs`
    (docs/decisions/0008-kubernetes-network-and-access.md)."""
    authorization: Literal["azure-rbac", "kubernetes-rbac"] = "azure-rbac"
    """AKS only: what decides an Entra ID user's rights in the cluster. `azure-rbac`: Azure role
    assignments (the deployer gets "Azure Kubernetes Service RBAC Cluster Admin");
    `kubernetes-rbac`: the cluster's own Roles and RoleBindings, with `adminGroupObjectIds`
    bound to cluster-admin."""
    admin_group_object_ids: tuple[EntraObjectId, ...] = ()
    """AKS with `authorization: kubernetes-rbac` only, and required there: object ids of the
    Entra ID groups whose members are cluster-admin. `up` installs the add-ons as the
    deployer, who must be in one."""
    aks_tier: Literal["standard", "free"] = "standard"
    """AKS only: the control plane's pricing tier. `standard` bills per cluster hour and has the
    API server's uptime SLA (99.9%, 99.95% with zones); `free` has no SLA and fewer control
    plane resources (Azure: not for production)."""
    shared_filesystem: SharedFilesystemSpec | None = None
    """EKS only: a shared Lustre file system every pod of the `nccl-tests` namespace mounts by the
    claim `shared` (ReadWriteMany) (clusterctl/spec/lustre.py); unset: none."""


UserName = Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_-]{0,31}$")]


class QosSpec(Model):
    name: Name
    """A Slurm QoS."""
    priority: Annotated[int, Strict()] = Field(default=0, ge=0, le=1_000_000)
    """0-1000000, added to a job's priority through `PriorityWeightQOS` (the highest QoS priority
    scores 1)."""
    max_wall_minutes: Annotated[int, Strict()] | None = Field(default=None, ge=1, le=525_600)
    """A wall-time cap for its jobs."""
    max_gpus_per_user: Annotated[int, Strict()] | None = Field(default=None, ge=1)
    """The GPUs one user's running jobs may hold under it."""


DEFAULT_QOS = (
    QosSpec(name="normal"),
    QosSpec(name="high", priority=100),
    QosSpec(name="debug", priority=200, max_wall_minutes=30, max_gpus_per_user=8),
)
"""normal for everyone; debug jumps the queue for short, small jobs; high is given per account."""


class AccountSpec(Model):
    name: Name
    """Slurm only: a Slurm account (`a-z0-9`, at most 15, not `root`). Accounts are applied in
    place (the team Run Command)."""
    fairshare: Annotated[int, Strict()] = Field(default=1, ge=1, le=65_533)
    """The account's share of the cluster, relative to the other accounts' (Slurm's
    Fairshare)."""
    gpu_limit: Annotated[int, Strict()] | None = Field(default=None, ge=1)
    """The GPUs the account's running jobs may hold at once (`GrpTRES=gres/gpu=N`, at most the
    cluster's GPUs); more jobs pend with `AssocGrpGRES`. Unset: no limit."""
    qos: tuple[Name, ...] = ("normal", "debug")
    """The QoS its users may use; the first is their default."""


class UserSpec(Model):
    name: UserName
    """Slurm only: a login (`a-z_0-9-`, not a name the nodes have: `root`, `slurm`, `munge`, the
    admin user, ...). Users change with `clusterctl users add/remove`, applied in place."""
    uid: Annotated[int, Strict()] = Field(ge=2000, le=59_999)
    """A uid 2000-59999, unique, the same (and a group of that number and name) on every node."""
    ssh_public_keys: tuple[str, ...] = Field(min_length=1)
    """One or more `ssh-ed25519`/`ssh-rsa` keys."""
    account: Name
    """A declared account."""
    admin: Annotated[bool, Strict()] = False
    """Sudo on every node (the `gpucl-admins` group) and Slurm operator."""


class ClusterSpec(Model):
    name: ClusterName
    """The cluster name, 3-24 of `a-z0-9-`."""
    cloud: CloudName
    """`azure` or `aws`."""
    region: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]{3,40}$")]
    """A region of that cloud (`config/regions.yaml`); the other cloud's regions are refused."""
    scheduler: Literal["slurm", "kubernetes"]
    """`slurm` (Azure) or `kubernetes` (EKS/AKS)."""
    ssh: SshSpec = SshSpec()
    network: NetworkSpec = NetworkSpec()
    head_node: HeadNodeSpec = HeadNodeSpec()
    login_nodes: LoginNodesSpec = LoginNodesSpec()
    partitions: tuple[PartitionSpec, ...] = Field(min_length=1)
    """The GPU partitions (Slurm) or node groups (Kubernetes), at least one."""
    storage: StorageSpec = StorageSpec()
    health_checks: HealthChecksSpec = HealthChecksSpec()
    validation: ValidationSpec = ValidationSpec()
    kubernetes: KubernetesSpec = KubernetesSpec()
    accounts: tuple[AccountSpec, ...] = ()
    users: tuple[UserSpec, ...] = ()
    """The team (Slurm clusters): `clusterctl users add/remove` changes it on a live cluster."""
    qos: tuple[QosSpec, ...] = DEFAULT_QOS
    """Slurm only: the QoS, weighted by `PriorityWeightQOS`; unset: `normal`, `high` (priority
    100) and `debug` (priority 200, 30 minutes, 8 GPUs per user)."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Extra tags on every resource. Azure: names up to 512 without `< > % & \\ ? /`, not
    `azure*`/`microsoft*`/`windows*`; AWS: keys up to 128, not `aws:*`; values up to 256;
    `gpu-clusters:*` is the project's own."""

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
