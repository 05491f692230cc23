"""What every cloud answers: the `Cloud` object each module of this package makes, the features a
cloud may not support, and what `down` uses to ask a cloud which tagged resources are left.

Standard library only, like the whole package: every layer of clusterctl may ask a cloud.
"""

from __future__ import annotations

import enum
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

ANY = "*"
"""Any scheduler (or, in clusterctl/platform.py, any cloud)."""


class Feature(enum.Enum):
    """What a platform may not support; the value is how every "not supported" message names it."""

    CLUSTERS = "clusters"
    ZONES_AND_RESERVATIONS = "zones and capacity reservations"
    ARM64_GPU_NODES = "arm64 GPU nodes"
    SHARED_LUSTRE = "shared Lustre file systems"
    MULTI_NODE_NVLINK = "NVLink domains across nodes"


@dataclass(frozen=True)
class CloudResource:
    id: str
    type: str
    name: str

    def as_json(self) -> dict[str, str]:
        return {"id": self.id, "type": self.type, "name": self.name}


class CheckUnavailable(Exception):
    """The cloud could not be asked (its CLI is missing or not logged in)."""


class SurvivorFinder(Protocol):
    """Lists every resource that carries `gpu-clusters:stack=<stack>`."""

    @property
    def description(self) -> str:
        """The command a person would run to check by hand."""
        ...

    def tagged(self, stack: str) -> list[CloudResource]: ...


def run_cli(argv: list[str]) -> str:
    """Run a cloud's CLI; CheckUnavailable (with its last error line) where it cannot answer."""
    if shutil.which(argv[0]) is None:
        raise CheckUnavailable(f"`{argv[0]}` is not installed")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CheckUnavailable(f"`{' '.join(argv[:3])}` failed: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise CheckUnavailable(f"`{' '.join(argv[:3])}` failed: {last}")
    return done.stdout


MockInvoke = Callable[[dict], dict]


@dataclass(frozen=True)
class Cloud:
    """One cloud. A module of clusterctl/clouds/ subclasses it (for the methods) and sets `CLOUD`
    to an instance; code asks `cloud_of(spec.cloud)` instead of comparing cloud names."""

    name: str
    """What `cloud:` says in a stack file."""
    title: str
    listed: int
    """Where the cloud stands in the list users see (schema enum, "should be 'azure' or 'aws'")."""
    provider_namespaces: tuple[str, ...]
    """Stack-file config namespaces of this cloud's Pulumi providers (`azure-native:location`)."""
    region_key: str
    """The provider setting that says where `pulumi up` builds."""
    region_key_required: bool
    """The program uses the default provider, so `region_key` must be set (else the environment's
    region is taken)."""
    tag_key_max: int
    tag_value_max: int
    image_word: str
    """What a partition's `image` is on this cloud (an Azure URN, an AWS AMI id)."""
    image_example: str
    default_head_sku: str
    clusters: Mapping[str, tuple[str, str]]
    """scheduler -> (module, class) of the component that builds that cluster, imported only when
    chosen (a plan of one pays for no other provider)."""
    mock_invokes: Mapping[str, MockInvoke]
    """Plausible answers to the provider functions (invokes) its components call, for `plan`."""
    unsupported: Mapping[tuple[Feature, str], str]
    """(feature, scheduler or ANY) -> what to do instead: every "not supported" message."""
    nat_egress: frozenset[str]
    """Schedulers whose stack gives the nodes' subnets one NAT gateway with one static public IP
    as their only way out (plan's cost lines, the egress IP output)."""
    disk_backup: frozenset[str]
    """Schedulers whose head node's data disk has a scheduled backup (storage.backup)."""
    kubernetes_service: str
    """The managed Kubernetes (`aks`, `eks`): the key of versions.yaml `kubernetes`."""
    quota_preflight: bool
    """`up` asks the cloud for sizes and quota first; `plan` says it did not."""
    gpu_scale_sets: bool
    """GPU nodes are VM scale sets of at most one placement group (one InfiniBand fabric)."""
    kubernetes_node_image: str
    """What a Kubernetes GPU node boots (a partition's own `image` is refused there)."""
    kubernetes_admin_principals: bool
    """Cluster admins are named by the stack (EKS access entries: kubernetes.adminPrincipalArns);
    otherwise they come from the cloud login (AKS with Entra ID)."""
    kubernetes_driver_in_image: bool
    """The Kubernetes GPU node image carries the NVIDIA driver and container toolkit (the EKS
    NVIDIA AMI); otherwise the GPU Operator installs them (AKS with gpuProfile.driver None)."""
    kubernetes_default_storage_class: bool
    """The stack makes the default StorageClass (EKS, where none is marked default since 1.30:
    a claim without a class never binds); otherwise the cloud ships one (AKS: managed-csi)."""
    kubernetes_autoscaler_release: bool
    """The cluster autoscaler is a Helm release of the stack (EKS); otherwise the cloud runs it
    for each node pool that has autoscaling on (AKS)."""
    nccl_tests_image: str
    """The NCCL tests image a Kubernetes cluster's MPIJob runs where versions.yaml names none."""
    nccl_tests_binary: str
    """Where that image keeps all_reduce_perf."""
    mpirun: str
    """mpirun by its absolute path in that image."""
    forward_env: tuple[str, ...]
    """What the image's ENV sets that mpirun must forward (-x) to ranks started through sshd."""
    kubernetes_services: tuple[str, ...] = ()
    """config/services.yaml keys a Kubernetes cluster of this cloud bills by the hour besides its
    nodes, idle or not: plan's cost lines."""
    kubernetes_tier_service: str | None = None
    """The config/services.yaml key of the control plane's paid tier where the stack chooses it
    (AKS Standard: kubernetes.aksTier), billed per cluster hour; None where there is no choice."""
    kubernetes_spot_taint: tuple[str, str, str] | None = None
    """(key, value, effect) of the taint the cloud puts on every spot node of a pool, or None
    where spot nodes are untainted (EKS managed node groups)."""
    kubernetes_mig_pools: bool = False
    """A GPU node pool can be made with a MIG profile by the cloud itself (AKS
    `gpuInstanceProfile`, when AKS installs the driver); otherwise MIG on Kubernetes needs the
    GPU Operator's MIG manager."""

    def tag_problem(self, key: str, value: str) -> str | None:
        """This cloud's own tag rules, past the lengths (tag_key_max, tag_value_max)."""
        raise NotImplementedError(f"{self.name}: tag_problem")

    def image_form_ok(self, image: str) -> bool:
        """Whether a partition's `image` has this cloud's form (image_word)."""
        raise NotImplementedError(f"{self.name}: image_form_ok")

    def survivor_finder(self, region: str) -> SurvivorFinder:
        """What asks the cloud for the resources still tagged with a stack (`down`)."""
        raise NotImplementedError(f"{self.name}: survivor_finder")
