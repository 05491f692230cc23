"""One validation from target to outcome: launch, parse, judge, localise, drain.

The CLI (clusterctl/cli/validate.py) and the post-deploy hook both call `validate`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from clusterctl.constants import EXIT_FAIL, EXIT_INCONCLUSIVE, NCCL_MAX_BYTES
from clusterctl.errors import UserError
from clusterctl.figures import tidy_floats
from clusterctl.nccl.algorithm import DEFAULT, RING, label
from clusterctl.nccl.judge import (
    GIB,
    AlgorithmRun,
    FabricExpectation,
    Observation,
    Thresholds,
    Verdict,
    judge,
    judge_algorithm,
    overall_status,
    worst_status,
)
from clusterctl.nccl.parse import NcclParseError, NcclRun, NotAllReduce, parse_all_reduce
from clusterctl.nccl.report import algorithm_json, to_json
from clusterctl.nccl.units import SizeError, parse_size
from clusterctl.spec.model import NcclValidationSpec, default_of
from clusterctl.validate import CouldNotRun
from clusterctl.validate.peers import peer_json
from clusterctl.validate.sweep import SweepResult, run_sweep
from clusterctl.validate.targets import KubeTarget, LogTarget, SlurmTarget, Target
from clusterctl.validate.thresholds import Overrides, choose

EXIT = {"pass": 0, "warn": 0, "fail": EXIT_FAIL, "inconclusive": EXIT_INCONCLUSIVE}


def size_bytes(text: str) -> int:
    """Bytes in a size (clusterctl.nccl.units syntax); UserError when it is not one."""
    try:
        return parse_size(text)
    except SizeError as exc:
        raise UserError(f"message size: {exc}") from None


@dataclass
class Options:
    sweep: bool = False
    drain: bool = False
    fail_below: float | None = None
    warn_below: float | None = None
    peer_floor: float | None = None
    """The peer check's share of the other pairs' median; None: the benchmark's, or PEER_FLOOR."""
    min_bytes: str | None = None
    max_bytes: str | None = None
    stack: Overrides | None = None
    container_image: str | None = None
    timeout_minutes: int = default_of(NcclValidationSpec, "timeout_minutes")
    default_algorithm: bool = True
    """Run the all-node all_reduce (2+ nodes) a second time with NCCL_ALGO unset, judged against
    the catalog's default-algorithm figures where it has them."""
    say: Callable[[str], None] = lambda _: None


@dataclass
class Outcome:
    verdicts: list[Verdict]
    sweep: SweepResult | None = None
    drained: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    runs: list[NcclRun] = field(default_factory=list)
    """The parsed runs the verdicts judge, in the same order (versions, ranks, networks)."""
    sku: str | None = None
    command: str | None = None
    """The benchmark's command line as launched, where clusterctl launched it."""
    default_algorithm: AlgorithmRun | None = None
    """The same all-node run with NCCL's own algorithm choice (multi-node live runs)."""

    @property
    def status(self) -> str:
        status: str = overall_status(self.verdicts)
        if self.default_algorithm is not None:
            status = worst_status([status, self.default_algorithm.status])
        if self.sweep is not None:
            loc = self.sweep.localization
            verdicts = {p.verdict for p in self.sweep.peers}
            if loc.bad or loc.flaky or "named" in verdicts:
                status = "fail"
            elif (loc.unresolved or "unconfirmed" in verdicts) and status == "pass":
                status = "warn"
        return status

    @property
    def exit_code(self) -> int:
        return EXIT[self.status]


def parse_output(text: str, where: str) -> NcclRun:
    try:
        return parse_all_reduce(text)
    except NotAllReduce as exc:  # another benchmark's log: the wrong file was given
        raise UserError(f"{where}: {exc}") from None
    except NcclParseError as exc:
        raise CouldNotRun(f"{where}: not a complete all_reduce_perf result: {exc}") from None


def catalog_thresholds(
    sku: str | None, nodes: int, opts: Options, *, default_algorithm: bool = False
) -> Thresholds:
    baseline = None
    if sku is not None:
        from clusterctl.spec.catalog import catalog

        found = catalog().require(sku)
        baseline = found.baseline(nodes, default_algorithm=default_algorithm)
        if baseline is not None and baseline.fail_below_gbps is None:
            baseline = None
    what = f"{sku} with {nodes} node{'s' if nodes != 1 else ''}" if sku else ""
    return choose(baseline, stack=opts.stack, cli=_cli(opts), what=what)


def default_thresholds(sku: str | None, nodes: int) -> tuple[Thresholds | None, str]:
    """The catalog's lines for NCCL's default algorithm on `nodes` nodes of `sku`, or None and
    why not (one line). The stack's and the command line's floors are for the Ring run."""
    if sku is None:
        return None, "no catalog SKU named for these nodes, so no default-algorithm figure"
    from clusterctl.spec.catalog import catalog

    baseline = catalog().require(sku).baseline(nodes, default_algorithm=True)
    if baseline is None or baseline.fail_below_gbps is None:
        return None, (
            f"config/skus.yaml has no default-algorithm figure for {sku} "
            "(nccl.multiNodeDefault): none is published"
        )
    return choose(baseline, what=sku), ""


def peer_floor(target: SlurmTarget | KubeTarget, opts: Options) -> float:
    """The command line's, else the stack's, else the benchmark's own, else the spec's default
    (clusterctl.nccl.judge.PEER_FLOOR)."""
    bench = target.benchmark if isinstance(target, SlurmTarget) else None
    own = bench.peer_floor if bench else None
    return opts.peer_floor or own or default_of(NcclValidationSpec, "peer_floor")


def _cli(opts: Options) -> Overrides:
    return Overrides(opts.fail_below, opts.warn_below, "command line")


def judge_run(
    run: NcclRun,
    th: Thresholds,
    group: str,
    *,
    gpus_per_host: int | None = None,
    nodes: int | None = None,
    sku: str | None = None,
    algorithm: str | None = None,
    notes: tuple[Observation, ...] = (),
) -> Verdict:
    return judge(
        run,
        th,
        min_gate_bytes=min(GIB, th.message_bytes),
        group=group,
        gpus_per_host=gpus_per_host,
        nodes=nodes,
        fabric=_sku_fabric(sku),
        expect=fabric_expectation(sku),
        algorithm=algorithm,
        notes=notes,
    )


def default_group(group: str) -> str:
    """How the default-algorithm run is named beside the Ring run's group."""
    return f"{group or 'cluster'} (default algorithm)"


def run_default_algorithm(
    launch: Callable[[], tuple[str, str]],
    *,
    sku: str | None,
    nodes: int,
    group: str,
    opts: Options,
    gpus_per_host: int | None = None,
    check_nodes: int | None = None,
    fabric_sku: str | None = None,
) -> AlgorithmRun:
    """The all-node run once more with NCCL_ALGO unset (`launch` runs it: (output, where)),
    judged against the catalog's default-algorithm lines or reported with why it is not."""
    th, why = default_thresholds(sku, nodes)
    opts.say(f"running all_reduce on {nodes} node(s) again: {label(DEFAULT)}")
    try:
        text, where = launch()
        if not text.strip():
            raise CouldNotRun(f"{where} gave no output")
        run = parse_output(text, where)
    except CouldNotRun as exc:
        return AlgorithmRun(
            DEFAULT,
            why_not=f"the run gave no result: {exc}",
            group=default_group(group),
            could_not_run=th is not None,
        )
    fabric_sku = fabric_sku or sku
    return judge_algorithm(
        run,
        th,
        algorithm=DEFAULT,
        why_not=why,
        group=default_group(group),
        gpus_per_host=gpus_per_host,
        nodes=check_nodes,
        fabric=_sku_fabric(fabric_sku),
        expect=fabric_expectation(fabric_sku),
    )


def _sku_fabric(sku: str | None) -> Literal["infiniband", "efa"] | None:
    """The fabric a catalog SKU's nodes talk over (None: none, or not a catalog SKU)."""
    if sku is None:
        return None
    from clusterctl.spec.catalog import catalog

    found = catalog().get(sku)
    kind = found.fabric.kind if found is not None else None
    return kind if kind in ("infiniband", "efa") else None  # type: ignore[return-value]


def fabric_expectation(sku: str | None) -> FabricExpectation | None:
    """What every host of a catalog SKU should show in NCCL's INFO lines (fabric.nccl)."""
    kind = _sku_fabric(sku)
    if kind is None:
        return None
    from clusterctl.spec.catalog import catalog

    proof = catalog().require(sku).fabric.nccl  # type: ignore[arg-type]
    if proof is None:
        return None
    return FabricExpectation(
        kind, proof.devices, gdr=proof.gdr, device_prefix=proof.device_prefix, source=proof.source
    )


SCALE_SET_NODE = re.compile(r"^(?P<scale_set>[a-z][a-z0-9]{0,14}-pg\d+)-[1-9]\d*$")
"""A Slurm node name `<partition>-pg<k>-<n>` (clusterctl.power.names): its scale set, one
InfiniBand fabric."""


def fabric_of(node: str) -> str:
    """The scale set of a Slurm node name; other names (Kubernetes nodes) one fabric."""
    m = SCALE_SET_NODE.match(node)
    return m["scale_set"] if m else ""


def _localise(nodes: list[str], run_pairs, pair_th: Thresholds, target, opts: Options):
    """Every node in 2-node pairs against the pair floor, the peer check's re-runs included;
    both nodes of a pair in one scale set (no RDMA between two)."""
    opts.say(f"localising: {len(nodes)} nodes in 2-node pairs")
    return run_sweep(
        nodes,
        run_pairs,
        gate_bytes=pair_th.message_bytes,
        floor_gbps=pair_th.fail_below_gbps,
        rel_floor=peer_floor(target, opts),
        say=opts.say,
        fabric=fabric_of,
    )


def validate_log(target: LogTarget, opts: Options) -> Outcome:
    try:
        text = target.read()
    except OSError as exc:
        raise CouldNotRun(f"cannot read {target.path}: {exc.strerror}") from None
    run = parse_output(text, target.name)
    hosts = run.hosts
    nodes = target.nodes or len(hosts)
    if not nodes:  # usage: the command must say what the log does not
        raise UserError(
            f"{target.name} names no hosts (no `# Rank` lines): say how many nodes it spanned "
            "with --nodes N"
        )
    if hosts and len(hosts) != nodes:  # usage: --nodes contradicts the log
        raise UserError(
            f"{target.name} spans {len(hosts)} host(s) ({', '.join(hosts)}) but --nodes is "
            f"{nodes}: the baseline would not apply"
        )
    if target.sku is None and opts.fail_below is None:  # -s is no way out: --from-log refuses it
        raise UserError(
            "--from-log without --sku has no baseline: give --sku SKU (the VM size the log ran "
            "on; `clusterctl catalog` lists them) or --fail-below GBPS"
        )
    mismatch = gpu_model_mismatch(run.gpu_names, target.sku)
    if mismatch:  # the --sku given is wrong for this log: a usage error, not a verdict
        raise UserError(f"{target.name}: {mismatch}")
    th, notes = _log_thresholds(target.sku, nodes, run.algorithm, opts)
    gpus = _sku_gpus(target.sku)
    verdict = judge_run(
        run,
        th,
        f"{nodes}-node",
        gpus_per_host=gpus,
        nodes=nodes,
        sku=target.sku,
        algorithm=run.algorithm,
        notes=notes,
    )
    return Outcome([verdict], runs=[run], sku=target.sku)


def gpu_model_mismatch(gpu_names: tuple[str, ...], sku: str | None) -> str | None:
    """Why the log's GPUs (nccl-tests' `# Rank ... device N [bus] NAME` lines) are not the SKU's,
    or None where they match or cannot be told (a name that holds no catalog GPU model)."""
    if sku is None or not gpu_names:
        return None
    from clusterctl.spec.catalog import catalog

    cat = catalog()
    want = cat.require(sku).gpu_model
    # Longest first: GB200 before a B200 it contains.
    models = sorted({s.gpu_model for s in cat.skus if s.gpu_model}, key=len, reverse=True)
    seen = {}
    for name in gpu_names:
        found = next((m for m in models if m.lower() in name.lower()), None)
        if found is not None:
            seen[found] = name
    if not seen or want is None or set(seen) == {want}:
        return None
    theirs = sorted(seen)
    others = [s.name for s in cat.skus if s.gpu_model in seen]
    hint = f" (e.g. {', '.join(others[:3])})" if others else ""
    return (
        f"its GPUs are {', '.join(seen[m] for m in theirs)}, but --sku {sku} has {want} GPUs: "
        f"that baseline does not apply; give the --sku the log ran on{hint}"
    )


def _log_thresholds(
    sku: str | None, nodes: int, algorithm: str | None, opts: Options
) -> tuple[Thresholds, tuple[Observation, ...]]:
    """The lines a log is judged against, by the algorithm it says it ran (clusterctl.nccl.
    algorithm), and a note where that choice needs saying. Ring, or a log that does not say,
    gets the Ring lines (the lower ones: a default-algorithm run that misses them misses its own
    too); a log that shows NCCL's default choice gets the default-algorithm lines where the
    catalog has them."""
    ring = catalog_thresholds(sku, nodes, opts)
    if sku is None or nodes < 2 or algorithm == RING:
        return ring, ()
    own, why = default_thresholds(sku, nodes)
    if algorithm == DEFAULT:
        if own is not None:
            return catalog_thresholds(sku, nodes, opts, default_algorithm=True), ()
        return ring, (
            Observation(
                "info",
                "bandwidth",
                f"the log ran {label(DEFAULT)} and {why}: held to the Ring lines (NCCL picks the "
                "algorithm its model predicts fastest, Ring among them)",
            ),
        )
    if algorithm is not None:
        return ring, (
            Observation(
                "warn",
                "bandwidth",
                f"the log ran {label(algorithm)}; the catalog's multi-node figures are for Ring "
                "and for NCCL's default choice: judged against the Ring lines",
            ),
        )
    if own is None or own.expected_gbps is None:
        return ring, ()
    return ring, (
        Observation(
            "info",
            "bandwidth",
            f"the log does not say which algorithm ran (no `NCCL_ALGO set by environment` line, "
            f"and no NCCL ENV lines to show it unset): judged against the Ring lines, the lower "
            f"ones; NCCL's default choice is expected at {own.expected_gbps:g} GB/s "
            f"({own.expected_basis or 'measured'}). Run with NCCL_DEBUG_SUBSYS=INIT,NET,ENV to "
            "tell",
        ),
    )


def _sku_gpus(sku: str | None) -> int | None:
    """GPUs per node of a catalog SKU (None without a SKU, or a SKU the catalog gives none)."""
    from clusterctl.spec.catalog import catalog

    return catalog().gpus_per_node(sku)


def validate(target: Target, opts: Options, **deps: Any) -> Outcome:
    if isinstance(target, LogTarget):
        return validate_log(target, opts)
    if isinstance(target, SlurmTarget):
        return validate_slurm(target, opts, **deps)
    return validate_k8s(target, opts, **deps)


def profile_env(sku: str | None) -> dict[str, str]:
    if sku is None:
        return {}
    from clusterctl.spec.catalog import catalog

    cat = catalog()
    profile = cat.profile(cat.require(sku))
    return dict(profile.env) if profile else {}


def _slurm_setup(target: SlurmTarget, opts: Options, launcher: Any = None) -> tuple[Any, Any]:
    """The launcher (ssh checked) and the job every Slurm validation starts from."""
    from clusterctl.validate.slurm_launcher import SlurmJob, SlurmLauncher
    from clusterctl.validate.transport import Ssh

    bench = target.benchmark
    if launcher is None:
        ssh = Ssh(target.ssh, reuse=True)  # closed by _closing
        opts.say(f"connecting to {target.ssh.label}")
        try:
            ssh.check_reachable()
        except BaseException:
            ssh.close()
            raise
        launcher = SlurmLauncher(ssh, remote_dir=target.remote_dir, keep_files=target.keep_files)
    job = SlurmJob(
        nodes=target.nodes,
        gpus_per_node=target.gpus_per_node,
        benchmark=bench.program,
        env=profile_env(target.sku) | dict(bench.env),
        partition=target.partition,
        nodelist=target.node_names,
        min_bytes=opts.min_bytes or bench.min_bytes,
        max_bytes=opts.max_bytes or bench.max_bytes,
        iters=bench.iters,
        warmup=bench.warmup,
        container_image=opts.container_image,
        time_limit_min=opts.timeout_minutes,
        sku=target.sku,
        python=target.python,
        pythonpath=target.pythonpath,
    )
    return launcher, job


@contextmanager
def _closing(launcher: Any, owned: bool) -> Iterator[None]:
    """Ends the launcher's shared ssh connection when this run made it, whatever happens."""
    try:
        yield
    finally:
        if owned:
            launcher.ssh.close()


def recheck_slurm(target: SlurmTarget, opts: Options, nodes: list[str], *, launcher: Any = None):
    """`--resume NODE...`: pair-test nodes validate drained; back in service or drained again."""
    owned = launcher is None
    launcher, job = _slurm_setup(target, opts, launcher)
    with _closing(launcher, owned):
        return _recheck_slurm(target, opts, nodes, launcher, job)


def _recheck_slurm(target: SlurmTarget, opts: Options, nodes: list[str], launcher: Any, job: Any):
    from clusterctl.validate.recheck import recheck_nodes

    ratio = target.benchmark.calibrate_ratio
    pair = None if ratio is not None else catalog_thresholds(target.sku, 2, opts)
    return recheck_nodes(
        launcher.ssh,
        launcher,
        job,
        nodes,
        health_prefix=target.drain_prefix,
        floor_gbps=opts.fail_below or (pair.fail_below_gbps if pair else None),
        gate_bytes=pair.message_bytes if pair else size_bytes(job.max_bytes),
        say=opts.say,
        **({} if ratio is None else {"reference_ratio": ratio}),
    )


def validate_slurm(target: SlurmTarget, opts: Options, *, launcher: Any = None) -> Outcome:
    owned = launcher is None
    launcher, job = _slurm_setup(target, opts, launcher)
    with _closing(launcher, owned):
        return _validate_slurm(target, opts, launcher, job)


def _validate_slurm(target: SlurmTarget, opts: Options, launcher: Any, job: Any) -> Outcome:
    from clusterctl.validate.drain import drain_slurm, reasons_for
    from clusterctl.validate.slurm_launcher import pair_job

    ratio = target.benchmark.calibrate_ratio
    timeout_s = opts.timeout_minutes * 60

    def run_pairs(pairs: list[tuple[str, str]]) -> list[str]:
        opts.say(f"running {len(pairs)} pair(s) in parallel: {pairs}")
        results = launcher.run_many([pair_job(job, a, b) for a, b in pairs], timeout_s=timeout_s)
        return [r.output for r in results]

    sweep: SweepResult | None = None
    notes: list[str] = []
    group = target.partition or target.group
    if ratio is not None and len(target.node_names) < 2:
        raise CouldNotRun(
            f"{target.label}: calibrating needs at least 2 nodes, slurmctld lists "
            f"{len(target.node_names)} ({', '.join(target.node_names) or 'none'})"
        )
    if ratio is not None:
        # No catalog baseline applies: calibrate on this cluster's own pairs first.
        opts.say("calibrating on 2-node pairs")
        cli_floor = opts.fail_below
        sweep = run_sweep(
            target.node_names,
            run_pairs,
            gate_bytes=size_bytes(job.max_bytes),
            floor_gbps=cli_floor,
            calibrate_ratio=ratio,
            rel_floor=peer_floor(target, opts),
            say=opts.say,
        )
        th = Thresholds(
            sweep.floor_gbps if cli_floor is None else cli_floor,
            opts.warn_below,
            size_bytes(job.max_bytes),
            sweep.calibration or "command line",
        )
    else:
        th = catalog_thresholds(target.sku, target.nodes, opts)
    opts.say(f"running all_reduce on {target.nodes} node(s)")
    result = launcher.run(job, timeout_s=timeout_s)
    if not result.output.strip():
        raise CouldNotRun(f"NCCL job {result.job_id} ended {result.state} without output")
    run = parse_output(result.output, f"job {result.job_id} ({result.state})")
    # every GPU of every node must have run a rank (a probe runs one per node, on no GPU)
    per_gpu = target.benchmark.one_rank_per_gpu
    gpus = target.gpus_per_node if per_gpu else None
    verdict = judge_run(
        run,
        th,
        group,
        gpus_per_host=gpus,
        nodes=target.nodes if per_gpu else None,
        sku=target.sku or target.fabric_sku,
        algorithm=RING if target.nodes > 1 else DEFAULT,
    )
    default = None
    if opts.default_algorithm and target.nodes > 1:

        def launch_default() -> tuple[str, str]:
            res = launcher.run(replace(job, algorithm=DEFAULT), timeout_s=timeout_s)
            return res.output, f"job {res.job_id} ({res.state})"

        default = run_default_algorithm(
            launch_default,
            sku=target.sku,
            nodes=target.nodes,
            group=group,
            opts=opts,
            gpus_per_host=gpus,
            check_nodes=target.nodes if per_gpu else None,
            fabric_sku=target.sku or target.fabric_sku,
        )
    if ratio is None and (opts.sweep or verdict.status == "fail"):
        nodes = list(run.hosts) or list(target.node_names)
        if len(nodes) >= 2:
            sweep = _localise(
                nodes, run_pairs, catalog_thresholds(target.sku, 2, opts), target, opts
            )
        else:
            notes.append("cannot localise: the output names no hosts (no `# Rank` lines)")
    outcome = Outcome(
        [verdict],
        sweep,
        notes=notes,
        runs=[run],
        sku=target.sku,
        command=_srun_line(job),
        default_algorithm=default,
    )
    if opts.drain and sweep is not None:
        reasons = reasons_for(sweep.localization.suspects, target.drain_prefix, sweep.floor_gbps)
        if reasons:
            outcome.drained = drain_slurm(launcher.ssh, reasons)
    return outcome


def _k8s_setup(target: KubeTarget, opts: Options, client: Any) -> tuple[Any, Any, dict]:
    """The client, the launcher (start windows from the image size) and the launcher output."""
    from clusterctl.validate.k8s_launcher import DEFAULT_IMAGE_BYTES, K8sLauncher, KubectlClient

    client = client or KubectlClient(target.kubeconfig)
    launcher = dict(target.launcher)
    if opts.container_image:
        launcher["image"] = opts.container_image
    image_bytes = int(launcher.get("imageBytes") or DEFAULT_IMAGE_BYTES)
    return client, K8sLauncher(client, image_bytes=image_bytes, say=opts.say), launcher


def _default_manifest(launcher: dict, opts: Options, deadline_s: int) -> dict:
    """The all-node MPIJob with NCCL_ALGO unset, under a name of its own."""
    from clusterctl.validate.k8s_launcher import build_mpijob

    return build_mpijob(
        launcher,
        name="clusterctl-nccl-default",
        min_bytes=opts.min_bytes or "8",
        max_bytes=opts.max_bytes or NCCL_MAX_BYTES,
        deadline_s=deadline_s,
        algorithm=DEFAULT,
    )


def _pair_manifest(launcher: dict, opts: Options) -> dict:
    from clusterctl.validate.k8s_launcher import build_mpijob

    return build_mpijob(
        {**launcher, "workers": 2},
        min_bytes=opts.min_bytes or "8",
        max_bytes=opts.max_bytes or NCCL_MAX_BYTES,
        deadline_s=opts.timeout_minutes * 60,
    )


def validate_k8s(target: KubeTarget, opts: Options, *, client: Any = None) -> Outcome:
    from clusterctl.validate.drain import reasons_for
    from clusterctl.validate.k8s_launcher import build_mpijob, prerequisites
    from clusterctl.validate.k8s_nodes import cordon_nodes, gpu_nodes, in_service, pair_mpijob

    client, k8s, launcher = _k8s_setup(target, opts, client)
    th = catalog_thresholds(target.sku, target.nodes, opts)
    timeout_s = opts.timeout_minutes * 60
    manifest = build_mpijob(
        launcher,
        min_bytes=opts.min_bytes or "8",
        max_bytes=opts.max_bytes or NCCL_MAX_BYTES,
        deadline_s=timeout_s,
    )
    needs = prerequisites(launcher)
    opts.say(f"running MPIJob {manifest['metadata']['name']} on {target.nodes} node(s)")
    log = k8s.run(manifest, timeout_s=timeout_s, needs=needs)
    run = parse_output(log, "MPIJob launcher log")
    group = launcher.get("partition") or "cluster"
    slots = int(launcher.get("slotsPerWorker") or 0) or None
    multi = target.nodes > 1
    verdict = judge_run(
        run,
        th,
        group,
        gpus_per_host=slots,
        nodes=target.nodes,
        sku=target.sku,
        algorithm=RING if multi else DEFAULT,
    )
    container = manifest["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    command = shlex.join([*container.get("command", []), *container.get("args", [])])
    outcome = Outcome([verdict], runs=[run], sku=target.sku, command=command)
    if opts.default_algorithm and multi:
        default = _default_manifest(launcher, opts, timeout_s)
        outcome.default_algorithm = run_default_algorithm(
            lambda: (
                k8s.run(default, timeout_s=timeout_s, needs=needs),
                f"MPIJob {default['metadata']['name']} launcher log",
            ),
            sku=target.sku,
            nodes=target.nodes,
            group=group,
            opts=opts,
            gpus_per_host=slots,
            check_nodes=target.nodes,
        )
    # Pair jobs only when asked (--sweep, or --drain after a failed run): they occupy nodes.
    if not (opts.sweep or (opts.drain and verdict.status == "fail")):
        return outcome
    nodes = in_service(gpu_nodes(client, launcher))
    if len(nodes) < 2:
        outcome.notes.append(f"cannot localise: {len(nodes)} node(s) in service ({nodes})")
        return outcome
    pair_th = catalog_thresholds(target.sku, 2, opts)
    base = _pair_manifest(launcher, opts)

    def run_pairs(pairs: list[tuple[str, str]]) -> list[str]:
        opts.say(f"running {len(pairs)} pair MPIJob(s) side by side: {pairs}")
        jobs = [pair_mpijob(base, p, i) for i, p in enumerate(pairs)]
        return k8s.run_many(jobs, timeout_s=timeout_s, needs=needs)

    outcome.sweep = _localise(nodes, run_pairs, pair_th, target, opts)
    if opts.drain:
        loc = outcome.sweep.localization.suspects
        reasons = reasons_for(loc, target.drain_prefix, outcome.sweep.floor_gbps)
        if reasons:
            outcome.drained, left = cordon_nodes(client, reasons)
            outcome.notes += left
    return outcome


def recheck_k8s(target: KubeTarget, opts: Options, names: list[str], *, client: Any = None):
    """`--resume NODE...` on Kubernetes: pair-test nodes validate took out; uncordon or not."""
    from clusterctl.validate.k8s_launcher import prerequisites
    from clusterctl.validate.k8s_nodes import recheck_k8s_nodes

    client, k8s, launcher = _k8s_setup(target, opts, client)
    pair = catalog_thresholds(target.sku, 2, opts)
    needs = prerequisites(launcher)
    return recheck_k8s_nodes(
        client,
        lambda m: k8s.run(m, timeout_s=opts.timeout_minutes * 60, needs=needs),
        _pair_manifest(launcher, opts),
        launcher,
        names,
        health_prefix=target.drain_prefix,
        floor_gbps=opts.fail_below or pair.fail_below_gbps,
        gate_bytes=pair.message_bytes,
        say=opts.say,
    )


def _srun_line(job: Any) -> str:
    """The benchmark's command in the batch script, continuation lines joined."""
    from clusterctl.validate.slurm_launcher import render_sbatch

    script = render_sbatch(job, "%x-%j.out").replace("\\\n", " ")
    lines = [line.strip() for line in script.splitlines() if line.strip().startswith("srun ")]
    return " ".join(lines[-1].split()) if lines else ""


def with_stack_overrides(opts: Options, nccl: Any, where: str) -> Options:
    """Options carrying a stack's validation.nccl overrides (failBelowGbps, ...)."""
    return replace(
        opts,
        stack=Overrides(nccl.fail_below_gbps, nccl.warn_below_gbps, where),
        container_image=opts.container_image or nccl.container_image,
        timeout_minutes=nccl.timeout_minutes,
        peer_floor=opts.peer_floor or nccl.peer_floor,
        min_bytes=opts.min_bytes or nccl.min_bytes,
        max_bytes=opts.max_bytes or nccl.max_bytes,
    )


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """The outcome as `--json` prints it and the history keeps it."""
    data = to_json(outcome.verdicts)
    data["status"] = outcome.status
    data["default_algorithm"] = (
        None if outcome.default_algorithm is None else algorithm_json(outcome.default_algorithm)
    )
    data["exit_code"] = outcome.exit_code
    data["notes"] = list(outcome.notes)
    data["drained"] = list(outcome.drained)
    if outcome.sweep is not None:
        loc = outcome.sweep.localization
        data["sweep"] = {
            "floor_gbps": outcome.sweep.floor_gbps,
            "calibration": outcome.sweep.calibration,
            "rounds": loc.rounds,
            "pairs_measured": loc.pairs_measured,
            "good": list(loc.good),
            "suspects": [
                {
                    "node": s.node,
                    "status": s.status,
                    "reason": s.reason,
                    "figures": [
                        {
                            "round": f.round,
                            "pair": list(f.pair),
                            "busbw_gbps": f.busbw_gbps,
                            "passed": f.passed,
                        }
                        for f in s.figures
                    ],
                }
                for s in loc.suspects
            ],
            "peer_floor": outcome.sweep.peer_floor,
            "peer_suspects": [peer_json(p) for p in outcome.sweep.peers],
        }
    return tidy_floats(data)
