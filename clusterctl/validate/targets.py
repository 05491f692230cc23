"""Where the validation runs, from the command line: a stack's outputs (-s), a scheduler reached
over ssh (--host), a Kubernetes cluster (--kubeconfig), the local sandbox (--sandbox), or a log
someone already has (--from-log)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from clusterctl import outputs as out
from clusterctl.constants import DRAIN_PREFIX, NCCL_MAX_BYTES, NCCL_MIN_BYTES

if TYPE_CHECKING:
    from clusterctl.project import Project
from clusterctl.errors import UserError
from clusterctl.validate.transport import SshTarget, parse_host


@dataclass(frozen=True)
class Benchmark:
    """What a Slurm validation launches and how it judges the result; the target carries it."""

    program: Literal["nccl-tests", "probe"]
    """What the job runs: nccl-tests' all_reduce_perf, or clusterctl.probe's stdlib ring (one
    rank per node, on no GPU: a cluster without GPUs, such as the VM sandbox)."""
    min_bytes: str
    max_bytes: str
    iters: int
    warmup: int
    calibrate_ratio: float | None = None
    """None: judged against the catalog's baseline for the SKU. A ratio: no baseline applies, so
    this cluster's own 2-node pairs are measured first and the floor is this share of the best."""
    env: tuple[tuple[str, str], ...] = ()
    """More environment for the job (the probe: where its nodes list their stand-in HCAs)."""
    peer_floor: float | None = None
    """The peer check's share of the other pairs' median where this benchmark needs its own (its
    healthy pairs scatter more than nccl-tests'); None: clusterctl.nccl.judge.PEER_FLOOR."""

    @property
    def one_rank_per_gpu(self) -> bool:
        return self.program == "nccl-tests"


NCCL_TESTS = Benchmark(
    "nccl-tests", min_bytes=NCCL_MIN_BYTES, max_bytes=NCCL_MAX_BYTES, iters=20, warmup=5
)


@dataclass(frozen=True)
class LogTarget:
    path: Path
    sku: str | None
    nodes: int | None = None
    """None: as many as the log's `# Rank` lines name."""
    text: str | None = None
    """The log itself where it came on stdin (`--from-log -`); None: read from `path`."""

    @property
    def name(self) -> str:
        """How messages name the log: its path, or `stdin`."""
        return "stdin" if self.text is not None else str(self.path)

    def read(self) -> str:
        return self.text if self.text is not None else self.path.read_text(errors="replace")


@dataclass(frozen=True)
class SlurmTarget:
    ssh: SshTarget
    nodes: int
    gpus_per_node: int
    """From the catalog's SKU or the stack's `gpusPerNode` output; never assumed."""
    sku: str | None = None
    fabric_sku: str | None = None
    """Whose fabric every host must show where `sku` (the bandwidth baseline) is None: the VM
    sandbox's nodes carry their size's stand-in HCAs but no baseline applies to the probe."""
    partition: str | None = None
    drain_prefix: str = DRAIN_PREFIX
    benchmark: Benchmark = NCCL_TESTS
    group: str = "cluster"
    """How a report names the nodes validated when no partition does."""
    remote_dir: str = "clusterctl-validate"
    node_names: tuple[str, ...] = ()
    python: str = "python3"
    pythonpath: str | None = None
    keep_files: bool = True
    label: str = ""


@dataclass(frozen=True)
class KubeTarget:
    kubeconfig: str
    """The kubeconfig file kubectl is given (never the ambient context)."""
    launcher: dict[str, Any] = field(default_factory=dict)  # an out.NcclLauncher
    drain_prefix: str = DRAIN_PREFIX
    label: str = ""
    kubeconfig_source: str = "--kubeconfig"
    """Where the file came from, for the line that says which kubeconfig was used."""

    @property
    def sku(self) -> str | None:
        return self.launcher.get("sku")

    @property
    def nodes(self) -> int:
        return int(self.launcher.get("workers", 0))


Target = LogTarget | SlurmTarget | KubeTarget


TARGETS = {
    "stack": "-s/--stack",
    "host": "--host",
    "kubeconfig": "--kubeconfig",
    "sandbox": "--sandbox",
    "from_log": "--from-log",
}
"""Where a validation can run: resolve()'s keyword -> the command-line option that picks it."""


def which_target(**given: object) -> str:
    """The one key of TARGETS given a value; UserError for none or several. `-s STACK
    --kubeconfig FILE` is the stack's target reached through FILE."""
    chosen = [k for k in TARGETS if given.get(k) not in (None, False)]
    if set(chosen) == {"stack", "kubeconfig"}:
        return "stack"
    if not chosen:
        raise UserError(f"say where to validate: one of {', '.join(TARGETS.values())}")
    if len(chosen) > 1:
        raise UserError(f"use only one of {', '.join(TARGETS[k] for k in chosen)}")
    return chosen[0]


def resolve(
    *,
    stack: str | None = None,
    host: str | None = None,
    kubeconfig: str | None = None,
    from_log: Path | None = None,
    sku: str | None = None,
    nodes: int | None = None,
    partition: str | None = None,
) -> Target:
    """The target named by one of the options; the VM sandbox's lives with the sandbox
    (sandbox/vm/target.py), which the CLI asks for `--sandbox`."""
    which = which_target(stack=stack, host=host, kubeconfig=kubeconfig, from_log=from_log)
    if which == "from_log":
        assert from_log is not None
        if str(from_log) == STDIN:
            return LogTarget(from_log, sku, nodes, text=read_stdin())
        if not from_log.is_file():
            raise UserError(f"--from-log {from_log}: no such file")
        return LogTarget(from_log, sku, nodes)
    if which == "host":
        if nodes is None:
            raise UserError("--host needs --nodes N (how many nodes to test)")
        try:
            ssh = parse_host(str(host))
        except ValueError as exc:
            raise UserError(str(exc)) from None
        gpus = _sku_gpus(sku)
        if gpus is None:
            raise UserError(
                "--host needs --sku (a GPU type from `clusterctl catalog`): the GPUs per node "
                "the job asks for come from it"
            )
        return SlurmTarget(ssh, nodes, gpus, sku, partition, label=str(host))
    if which == "kubeconfig":
        if sku is None or nodes is None:
            raise UserError("--kubeconfig needs --sku and --nodes (or use -s STACK)")
        path = given_kubeconfig(str(kubeconfig))
        launcher = dict(launcher_for_sku(sku, nodes))
        return KubeTarget(path, launcher, label=f"--kubeconfig {kubeconfig}")
    assert stack is not None
    return _deployed_stack_target(stack, nodes, partition, kubeconfig)


STDIN = "-"
"""`--from-log -`: the log comes on stdin, as `kubectl apply -f -` reads a manifest."""


def read_stdin() -> str:
    """All of stdin; a terminal there means nothing was piped, which would wait forever."""
    import sys

    if sys.stdin is None or sys.stdin.isatty():
        raise UserError(
            "--from-log -: reads the log from stdin, which is a terminal here; pipe it in "
            "(`cat all_reduce.log | clusterctl validate --nccl --from-log - --sku SKU`) or "
            "name the file"
        )
    return sys.stdin.buffer.read().decode(errors="replace")


def given_kubeconfig(path: str, flag: str = "--kubeconfig") -> str:
    """The file the user named, checked to exist (kubectl would otherwise fall back to nothing
    useful); never the ambient context."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise UserError(f"{flag} {path}: no such file; pass the kubeconfig of the cluster")
    return str(file.resolve())


def _deployed_stack_target(
    stack: str, nodes: int | None, partition: str | None, kubeconfig: str | None = None
) -> Target:
    from clusterctl.lifecycle.kubeconfig import stack_kubeconfig
    from clusterctl.project import find_project

    project = find_project()  # the one up/status/down use
    given = given_kubeconfig(kubeconfig) if kubeconfig else None
    target = stack_target(
        stack,
        read_stack_outputs(stack, project),
        nodes=nodes,
        partition=partition,
        kubeconfig=(
            (lambda _value: given)
            if given
            else (lambda value: str(stack_kubeconfig(project.dir, stack, value)))
        ),
    )
    if given and not isinstance(target, KubeTarget):
        raise UserError(f"--kubeconfig: stack {stack} is a Slurm cluster; leave it out")
    if given and isinstance(target, KubeTarget):
        return replace(target, kubeconfig_source=f"--kubeconfig, for stack {stack}")
    return target


def _sku_gpus(sku: str | None) -> int | None:
    from clusterctl.spec.catalog import catalog

    return catalog().gpus_per_node(sku)


def launcher_for_sku(sku_name: str, nodes: int) -> out.NcclLauncher:
    """An `ncclLauncher` value for a cluster made elsewhere (--kubeconfig): built by the same
    function as a stack's output (clusterctl.spec.kubernetes.launcher_for)."""
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.kubernetes import launcher_for

    cat = catalog()
    return launcher_for(cat.require(sku_name, field="--sku"), nodes, cat)


def stack_target(
    stack: str,
    outputs: dict[str, Any],
    *,
    nodes: int | None = None,
    partition: str | None = None,
    kubeconfig: Callable[[Any], str] | None = None,
) -> Target:
    """A target from `pulumi stack output` values (pure: tests pass recorded outputs).

    Reads only what clusterctl.outputs.READS["validate"] declares. `kubeconfig` turns the
    (secret) kubeconfig output into the file kubectl is given.
    """
    got = out.reader("validate", outputs)
    prefix = got.get(out.DRAIN_PREFIX) or DRAIN_PREFIX
    if got.kind == out.KUBERNETES:
        launcher: dict[str, Any] = dict(got.get(out.NCCL_LAUNCHER) or {})
        if not launcher:
            raise UserError(f"stack {stack}: no ncclLauncher output; redeploy with this version")
        if nodes:
            launcher["workers"] = nodes
        if kubeconfig is None:
            raise UserError(f"stack {stack}: no kubeconfig to reach the cluster with")
        path = kubeconfig(got.get(out.KUBECONFIG))
        return KubeTarget(
            path, launcher, prefix, f"stack {stack} (kubeconfig {path})",
            kubeconfig_source=f"the `{out.KUBECONFIG}` output of stack {stack}",
        )  # fmt: skip
    address = got.get(out.SCHEDULER_ADDRESS)
    if not address:
        raise UserError(f"stack {stack}: no schedulerAddress output; is it deployed?")
    parts: list[out.PartitionOutput] = got.get(out.PARTITIONS) or []
    if partition:
        parts = [p for p in parts if p.get("name") == partition]
        if not parts:
            raise UserError(f"stack {stack}: no partition {partition!r}")
    if not parts:
        raise UserError(f"stack {stack}: no partitions in its outputs")
    part = parts[0]
    return SlurmTarget(
        ssh=SshTarget(host=str(address), user=got.get(out.ADMIN_USER)),
        nodes=nodes or int(part["nodes"]),
        gpus_per_node=_output_gpus(stack, part),
        sku=part.get("sku"),
        partition=part.get("name"),
        drain_prefix=prefix,
        label=f"stack {stack}",
    )


def _output_gpus(stack: str, part: out.PartitionOutput) -> int:
    gpus = part.get("gpusPerNode")
    if not gpus:
        raise UserError(
            f"stack {stack}: partition {part.get('name')!r} has no gpusPerNode output; redeploy "
            "with this version"
        )
    return int(gpus)


def _is_secret(value: Any) -> bool:
    return isinstance(value, dict) and "4dabf18193072939515e22adb298388d" in value


def outputs_from_checkpoint(doc: dict[str, Any]) -> dict[str, Any]:
    """Stack outputs from a file-backend checkpoint (secrets left out: they are encrypted)."""
    deployment = doc.get("checkpoint", doc).get("latest") or {}
    for res in deployment.get("resources") or []:
        if res.get("type") == "pulumi:pulumi:Stack":
            return {k: v for k, v in (res.get("outputs") or {}).items() if not _is_secret(v)}
    return {}


def read_stack_outputs(stack: str, project: Project) -> dict[str, Any]:
    """The file backend's checkpoint if there is one, else `pulumi stack output --json`
    (secrets left out or masked: the kubeconfig is read apart, clusterctl.lifecycle.kubeconfig)."""
    for path in project.checkpoint_files(stack):
        if path.is_file():
            outputs = outputs_from_checkpoint(json.loads(path.read_text()))
            if outputs:
                return outputs
    pulumi = shutil.which("pulumi") or str(Path.home() / ".pulumi" / "bin" / "pulumi")
    if Path(pulumi).exists():
        proc = subprocess.run(
            [pulumi, "stack", "output", "--json", "-s", stack, "--cwd", str(project.dir)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if proc.returncode == 0:
            return json.loads(proc.stdout or "{}")
    raise UserError(
        f"stack {stack}: no deployed outputs found (deploy it with `clusterctl up -s {stack}`, "
        "or point at a cluster with --host / --kubeconfig)"
    )
