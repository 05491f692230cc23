"""The stack outputs: one contract between the Pulumi program that writes them and the commands
that read them (standard library only: the CLI imports it without pulumi or pydantic).

Writers: components/program.py (CommonOutputs), components/azure/slurm/slurm_cluster.py
(SlurmClusterOutputs), components/aws/eks_cluster.py (EksClusterOutputs) and
components/azure/aks/aks_cluster.py (AksClusterOutputs); clusterctl/spec/kubernetes.py builds the
`ncclLauncher` value (NcclLauncher). Readers: `clusterctl validate -s`, `status` and `up` read
only the keys READS declares for them, through `reader()`, which refuses any other key;
tests/unit/test_outputs_contract.py checks that the plan of every shipped stack produces every
key each command reads, with the declared type.

The NCCL verdict of `validation.nccl.onDeploy` is not a stack output: the post-deploy hook
(clusterctl/validate/hook.py) runs inside `pulumi up` after the last scale set is created, when
the stack's outputs are already decided, and a program cannot add an output after the fact. The
hook logs one line, `ncclValidation {"verdict": ..., "message": ...}` (validation_line), which
the engine streams to `clusterctl up` as a diagnostic event; `up` picks it out of the events
(parse_validation_line) and shows it. This keeps one run of the benchmark, inside the update, so
`onFailure: fail` still fails the update (also for plain `pulumi up`), rather than `up` running
the validation a second time after the engine has already run it.

Kubernetes stacks export `kubeconfig` as a secret output; `up` and `validate -s` write it to
`<project>/.clusterctl/<stack>.kubeconfig` (mode 0600) and kubectl is always given that file, so
`validate -s` never uses the ambient kubectl context.
"""

import json
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any, Final, Literal, NotRequired, TypedDict, Union

SLURM: Final = "slurm"
KUBERNETES: Final = "kubernetes"
Kind = Literal["slurm", "kubernetes"]

# -- keys every stack has (components/program.py) -----------------------------------------------
STACK: Final = "stack"
CLUSTER_NAME: Final = "clusterName"
CLOUD: Final = "cloud"
SCHEDULER: Final = "scheduler"
COST_PER_HOUR: Final = "costPerHourUsd"
DRAIN_PREFIX: Final = "drainPrefix"

# -- Slurm (components/azure/slurm/slurm_cluster.py) -----------------------------------------------
RESOURCE_GROUP: Final = "resourceGroupName"  # also AKS
SCHEDULER_HOST: Final = "schedulerHost"
SCHEDULER_ADDRESS: Final = "schedulerAddress"
ADMIN_USER: Final = "adminUser"
SSH_COMMAND: Final = "sshCommand"
PARTITIONS: Final = "partitions"
JUMP_HOST_ADDRESS: Final = "jumpHostAddress"
LOGIN_ADDRESSES: Final = "loginAddresses"  # where the team logs in (loginNodes)
EGRESS_ADDRESS: Final = "egressAddress"  # the NAT gateway's public IP: every node's address out
SSH_PRIVATE_KEY: Final = "sshPrivateKey"

# -- Kubernetes (components/aws/eks_cluster.py, components/azure/aks/aks_cluster.py) ---------------
KUBECONFIG: Final = "kubeconfig"  # a secret output
KUBERNETES_VERSION: Final = "kubernetesVersion"
ADDON_VERSIONS: Final = "addonVersions"
NCCL_LAUNCHER: Final = "ncclLauncher"
EKS_CLUSTER_NAME: Final = "eksClusterName"
CLUSTER_ENDPOINT: Final = "clusterEndpoint"
REGION: Final = "region"
VPC_ID: Final = "vpcId"
GPU_NODE_GROUPS: Final = "gpuNodeGroups"
AKS_CLUSTER_NAME: Final = "aksClusterName"
GPU_NODE_POOLS: Final = "gpuNodePools"

# -- the ncclLauncher value (clusterctl/spec/kubernetes.py nccl_launcher) ------------------------
ALL_REDUCE_PERF: Final = "allReducePerf"  # the all_reduce_perf binary inside the image

# -- the onDeploy verdict, a log line of the post-deploy hook (not an output: see above) ---------
VALIDATION_EVENT: Final = "ncclValidation"


class CommonOutputs(TypedDict):
    stack: str
    clusterName: str
    cloud: str
    scheduler: Kind
    costPerHourUsd: float | None  # None: a type without a catalog price (unknown, not 0)
    drainPrefix: str


class PartitionOutput(TypedDict):
    name: str
    sku: str
    nodes: int
    gpusPerNode: int
    scaleSets: NotRequired[list[str]]


class SlurmClusterOutputs(TypedDict):
    resourceGroupName: str
    schedulerHost: str
    schedulerAddress: str
    adminUser: str
    sshCommand: str
    partitions: list[PartitionOutput]
    jumpHostAddress: NotRequired[str]
    sshPrivateKey: NotRequired[str]
    egressAddress: NotRequired[str]
    """NotRequired: stacks from before the NAT gateway have none."""
    loginAddresses: NotRequired[list[str]]
    """Empty without login nodes; NotRequired: stacks from before login nodes have none."""


class SlurmOutputs(CommonOutputs, SlurmClusterOutputs):
    pass


class NcclTopology(TypedDict):
    """The NCCL topology file the workers mount from a ConfigMap (AKS)."""

    configMap: str
    mountPath: str
    file: str


class NcclLauncher(TypedDict):
    """What `validate` needs to launch an all_reduce_perf MPIJob on the cluster."""

    namespace: str
    sku: str
    workers: int
    slotsPerWorker: int
    image: str
    allReducePerf: str
    resources: dict[str, int | str]
    capabilities: list[str]
    env: dict[str, str]
    nodeSelector: dict[str, str]
    tolerations: list[dict[str, str]]
    partition: NotRequired[str]
    fabric: NotRequired[str]
    mpiJobApiVersion: NotRequired[str]
    mpirun: NotRequired[str]
    """mpirun by its absolute path in the image (older stacks: `mpirun` on PATH)."""
    forwardEnv: NotRequired[list[str]]
    """Image ENV names forwarded to the ranks with -x (sshd-started ranks do not inherit it)."""
    shmSize: NotRequired[str]
    """sizeLimit of the workers' /dev/shm memory emptyDir (counted in their memory limit)."""
    topology: NotRequired[NcclTopology]
    queue: NotRequired[str]
    """Kueue LocalQueue the MPIJob is submitted to (kubernetes.kueue: true)."""


class KubernetesClusterOutputs(TypedDict):
    kubeconfig: str
    kubernetesVersion: str
    addonVersions: dict[str, str]
    ncclLauncher: NcclLauncher


class EksNodeGroupOutput(TypedDict):
    subnetId: str | None
    placementGroup: str | None


class EksClusterOutputs(KubernetesClusterOutputs):
    eksClusterName: str
    clusterEndpoint: str
    region: str
    vpcId: str
    gpuNodeGroups: dict[str, EksNodeGroupOutput]


class AksNodePoolOutput(TypedDict):
    agentPoolName: str
    agentPoolNames: list[str]
    """Every pool of the partition: one per InfiniBand fabric of at most 100 nodes."""
    vmSize: str
    nodes: int
    gpuDriver: str


class AksClusterOutputs(KubernetesClusterOutputs):
    resourceGroupName: str
    aksClusterName: str
    gpuNodePools: dict[str, AksNodePoolOutput]


class KubernetesOutputs(CommonOutputs, KubernetesClusterOutputs):
    pass


class NcclValidationResult(TypedDict):
    verdict: Literal["pass", "warn", "fail", "skipped"]
    message: str


OUTPUTS: Final[dict[str, type]] = {SLURM: SlurmOutputs, KUBERNETES: KubernetesOutputs}
"""The outputs of a stack, per cluster kind (the spec's `scheduler`)."""

READS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "validate": {
        SLURM: (SCHEDULER, DRAIN_PREFIX, SCHEDULER_ADDRESS, ADMIN_USER, PARTITIONS),
        KUBERNETES: (SCHEDULER, DRAIN_PREFIX, NCCL_LAUNCHER, KUBECONFIG),
    },
    "status": {
        SLURM: (SSH_COMMAND, EGRESS_ADDRESS, LOGIN_ADDRESSES, SCHEDULER_ADDRESS, ADMIN_USER),
        KUBERNETES: (KUBERNETES_VERSION,),
    },
    "up": {SLURM: (), KUBERNETES: (KUBECONFIG,)},
    "notebook": {SLURM: (LOGIN_ADDRESSES, SCHEDULER_ADDRESS), KUBERNETES: (KUBECONFIG,)},
}
"""Per command and cluster kind, every stack output key the command reads."""

SECRET_MASK: Final = "[secret]"


def kind_of(outputs: Mapping[str, Any]) -> Kind:
    """The cluster kind the outputs describe (stacks deployed before `scheduler` was written
    are told apart by their launcher)."""
    value = outputs.get(SCHEDULER)
    if value in (SLURM, KUBERNETES):
        return value  # type: ignore[return-value]
    return KUBERNETES if NCCL_LAUNCHER in outputs else SLURM


class UndeclaredRead(Exception):
    """A command read a key READS does not list for it: declare it (and the test checks it).
    Not a KeyError, so that Mapping.get cannot turn it into None."""


class OutputReader(Mapping[str, Any]):
    """The stack outputs as one command may read them: only the keys READS declares."""

    def __init__(self, command: str, outputs: Mapping[str, Any]):
        self.command = command
        self.kind: Kind = kind_of(outputs)
        self.declared = READS[command][self.kind]
        self._outputs = outputs

    def __getitem__(self, key: str) -> Any:
        if key not in self.declared:
            raise UndeclaredRead(f"`{self.command}` reads {key!r} ({self.kind}): not in READS")
        return self._outputs[key]

    def __iter__(self) -> Iterator[str]:
        return (k for k in self.declared if k in self._outputs)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def reader(command: str, outputs: Mapping[str, Any]) -> OutputReader:
    return OutputReader(command, outputs)


def validation_line(result: NcclValidationResult) -> str:
    """The post-deploy hook's log line that carries its verdict to `clusterctl up`."""
    return f"{VALIDATION_EVENT} {json.dumps(dict(result), sort_keys=True)}"


def parse_validation_line(text: str) -> NcclValidationResult | None:
    """The verdict in a diagnostic event's message, or None when it is some other message."""
    head, _, body = text.strip().partition(" ")
    if head != VALIDATION_EVENT:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if not isinstance(doc, dict) or type_problems(doc, NcclValidationResult):
        return None
    return NcclValidationResult(verdict=doc["verdict"], message=doc["message"])


def type_problems(value: Any, tp: Any, path: str = "$") -> list[str]:
    """Where `value` does not have the type `tp` (TypedDicts, list, dict, unions, Literal)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return []
    if typing.is_typeddict(tp):
        return _typeddict_problems(value, tp, path)
    if origin in (Union, types.UnionType):
        tried = [type_problems(value, t, path) for t in typing.get_args(tp)]
        return [] if any(not p for p in tried) else [f"{path}: {value!r} is not {tp}"]
    if origin is Literal:
        ok = value in typing.get_args(tp)
        return [] if ok else [f"{path}: {value!r} is not one of {typing.get_args(tp)}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: {type(value).__name__}, not a list"]
        (item,) = typing.get_args(tp)
        return [p for i, v in enumerate(value) for p in type_problems(v, item, f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__}, not a dict"]
        kt, vt = typing.get_args(tp)
        return [
            p
            for k, v in value.items()
            for p in (*type_problems(k, kt, f"{path} key"), *type_problems(v, vt, f"{path}.{k}"))
        ]
    return _plain_problems(value, tp, path)


def _typeddict_problems(value: Any, tp: Any, path: str) -> list[str]:
    if not isinstance(value, Mapping):
        return [f"{path}: {type(value).__name__}, not a {tp.__name__}"]
    hints = typing.get_type_hints(tp)
    problems = [f"{path}.{k}: missing" for k in sorted(tp.__required_keys__) if k not in value]
    for key, sub in hints.items():
        if key in value:
            problems += type_problems(value[key], sub, f"{path}.{key}")
    return problems


def _plain_problems(value: Any, tp: Any, path: str) -> list[str]:
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is type(None):
        ok = value is None
    else:
        ok = isinstance(value, tp)
    return [] if ok else [f"{path}: {value!r} is not {getattr(tp, '__name__', tp)}"]


def key_type(kind: str, key: str) -> Any:
    """The declared type of one output key of a cluster kind."""
    return typing.get_type_hints(OUTPUTS[kind])[key]
