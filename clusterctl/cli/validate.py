"""`clusterctl validate --nccl` and `--train`: register(app) adds the command to the main typer app.

Exit codes (constants.EXIT_*): 0 pass (warnings included), 1 fail, 2 usage error (bad input),
3 inconclusive (unreachable host, job did not start, output not parsable, nothing judged). Each
problem is one line on stderr.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from clusterctl.cli.acceptance import (
    RecordOpt,
    ReportOpt,
    check_report_path,
    history_stack,
    register_history,
)
from clusterctl.cli.common import (
    OptionalStackOpt,
    SandboxDirOpt,
    SandboxOpt,
    bail,
    err,
    inconclusive,
    out,
    sandbox_workdir,
)
from clusterctl.cli.paths import writable_file
from clusterctl.constants import NCCL_MAX_BYTES, NCCL_MIN_BYTES
from clusterctl.errors import UserError
from clusterctl.interrupt import cancellable

FLAGS = {
    "sku": "--sku",
    "partition": "--partition",
    "sweep": "--sweep",
    "drain": "--drain",
    "min_bytes": "-b/--min-bytes",
    "max_bytes": "-e/--max-bytes",
    "resume": "--resume",
    "peer_floor": "--peer-floor",
}
# Options a target has no use for, and why: refused (exit 2), never silently dropped.
IGNORED: dict[str, dict[str, str]] = {
    "from_log": {
        "sweep": "a log cannot be re-measured in 2-node pairs",
        "drain": "nothing is localised from a log, so there is nothing to drain",
        "partition": "the log is judged as a whole",
        "min_bytes": "the log's sizes are what was run",
        "max_bytes": "the log's sizes are what was run",
        "resume": "a log cannot re-test a node",
        "peer_floor": "a log is one run: it has no 2-node pairs to compare",
    },
    "sandbox": {
        "sku": "the sandbox probe has no catalog baseline; it calibrates on its own pairs",
        "partition": "the sandbox has one partition",
        "sweep": "the sandbox always measures 2-node pairs",
    },
    "kubeconfig": {"partition": "Kubernetes has no Slurm partitions"},
    "stack": {"sku": "the stack's outputs name its SKU"},
    "host": {},
}


def refuse_ignored(given: Mapping[str, object]) -> None:
    """UserError (one line) unless exactly one target is given and no option it would ignore."""
    from clusterctl.validate.targets import TARGETS, which_target

    target = which_target(**{k: given.get(k) for k in TARGETS})
    for key, why in IGNORED[target].items():
        if given.get(key) not in (None, False):
            raise UserError(f"{FLAGS[key]} does nothing with {TARGETS[target]}: {why}")


def check_peer_floor(ratio: float | None) -> None:
    if ratio is not None and not 0 < ratio < 1:
        raise UserError(
            f"--peer-floor {ratio:g}: a share of the other pairs' median, above 0 and below 1 "
            "(e.g. 0.9)"
        )


def sizes(min_bytes: str | None, max_bytes: str | None) -> tuple[str | None, str | None]:
    """-b/-e checked and respelt for nccl-tests (see clusterctl.nccl.units)."""
    from clusterctl.nccl.units import SizeError, format_size, parse_size

    parsed: list[int | None] = []
    for flag, text in (("-b/--min-bytes", min_bytes), ("-e/--max-bytes", max_bytes)):
        try:
            parsed.append(None if text is None else parse_size(text))
        except SizeError as exc:
            raise UserError(f"{flag}: {exc}") from None
    lo, hi = parsed
    if lo is not None and hi is not None and lo > hi:
        raise UserError(f"-b/--min-bytes {min_bytes} is above -e/--max-bytes {max_bytes}")
    return tuple(None if n is None else format_size(n) for n in parsed)  # type: ignore[return-value]


def _size_opt(short: str, long: str, what: str, key: str, default: str) -> typer.models.OptionInfo:
    help_ = (
        f"{what} message size, e.g. 8, 1M, 1.5G, 16GiB (K/M/G are 1024-based, as in nccl-tests). "
        f"Default: the stack's validation.nccl.{key}, else {default}."
    )
    return typer.Option(short, long, help=help_, metavar="SIZE")


NcclOpt = Annotated[bool, typer.Option("--nccl", help="Run the NCCL all-reduce check.")]
TrainOpt = Annotated[
    bool,
    typer.Option(
        "--train",
        help="Run a distributed training job (torchrun, PyTorch DDP) on every node: tokens/s per "
        "GPU, step time, stragglers, scaling from 1 node to N.",
    ),
]
MinTokensOpt = Annotated[
    float | None,
    typer.Option(
        "--min-tokens-per-gpu",
        min=0.0,
        help="--train: throughput floor. Default: 80% of the first passing run kept for the "
        "stack (-s/--record); none without one.",
    ),
]
MinScalingOpt = Annotated[
    float | None,
    typer.Option(
        "--min-scaling",
        min=0.0,
        max=1.0,
        help="--train: weak-scaling efficiency floor, 0-1 (default 0.8 on GPUs).",
    ),
]
NoScalingOpt = Annotated[
    bool,
    typer.Option("--no-scaling", help="--train: skip the 1-node reference run (no scaling)."),
]
StepsOpt = Annotated[
    int | None, typer.Option("--steps", min=5, help="--train: timed steps (default 30 on GPUs).")
]
HostOpt = Annotated[
    str | None,
    typer.Option(
        "--host", help="[user@]host[:port] of a Slurm scheduler (your ssh config applies)."
    ),
]
KubeconfigOpt = Annotated[
    str | None, typer.Option("--kubeconfig", help="A Kubernetes cluster with the MPI operator.")
]
FromLogOpt = Annotated[
    Path | None,
    typer.Option(
        "--from-log",
        help="Judge an all_reduce_perf output file (hosts from its `# Rank` lines); - reads "
        "it from stdin.",
    ),
]


def _sku_names(incomplete: str) -> list[str]:
    from clusterctl.cli.completion import sku_names

    return sku_names(incomplete)


SkuOpt = Annotated[
    str | None,
    typer.Option("--sku", help="VM type, for the baseline.", autocompletion=_sku_names),
]
NodesOpt = Annotated[int | None, typer.Option("--nodes", min=1, help="Number of nodes.")]
PartitionOpt = Annotated[str | None, typer.Option("--partition", help="Slurm partition.")]
SweepOpt = Annotated[
    bool, typer.Option("--sweep", help="Also test 2-node pairs to find bad nodes.")
]
DrainOpt = Annotated[
    bool,
    typer.Option(
        "--drain", help="Take out the bad nodes a sweep finds (Slurm: drain; Kubernetes: cordon)."
    ),
]
ResumeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--resume",
        metavar="NODE",
        help="Return a node that `--drain` took out, once a 2-node test with a healthy partner "
        "passes (inside a maintenance reservation); else it is drained again. Repeatable.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
JunitOpt = Annotated[Path | None, typer.Option("--junit", help="Write a JUnit XML report here.")]
FailBelowOpt = Annotated[
    float | None, typer.Option("--fail-below", min=0.0, help="Floor in GB/s busbw.")
]
WarnBelowOpt = Annotated[
    float | None, typer.Option("--warn-below", min=0.0, help="Warning level, GB/s busbw.")
]
PeerFloorOpt = Annotated[
    float | None,
    typer.Option(
        "--peer-floor",
        metavar="RATIO",
        help="2-node pairs: one below RATIO x the other pairs' median is re-run once, and fails "
        "the run if the re-run is below it too. Default: the stack's validation.nccl.peerFloor, "
        "else 0.9.",
    ),
]
MinBytesOpt = Annotated[
    str | None, _size_opt("-b", "--min-bytes", "Smallest", "minBytes", NCCL_MIN_BYTES)
]
MaxBytesOpt = Annotated[
    str | None, _size_opt("-e", "--max-bytes", "Largest", "maxBytes", NCCL_MAX_BYTES)
]


class _ValidateGroup(TyperGroup):
    """A stray word is an extra argument (as before `validate history` existed), not a command."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands:
            ctx.fail(f"Got unexpected extra argument ({args[0]})")
        return super().resolve_command(ctx, args)


def _refuse_train_only(flags: dict[str, object]) -> None:
    for flag, value in flags.items():
        if value not in (None, False):
            bail(f"{flag} goes with --train")


def _cancellable_resume(stack, host, kubeconfig, sku, sandbox, nodes: list[str]) -> int:
    with cancellable():  # Ctrl-C: the reservation and the jobs are removed first
        return _resume(stack, host, kubeconfig, sku, sandbox, nodes)


def register(app: typer.Typer) -> None:
    # A group, so `validate history` is a subcommand; `validate --nccl ...` runs the callback.
    group = typer.Typer(
        cls=_ValidateGroup, context_settings={"help_option_names": ["-h", "--help"]}
    )
    app.add_typer(group, name="validate")
    register_history(group)

    @group.callback(invoke_without_command=True)
    def validate(
        ctx: typer.Context,
        nccl: NcclOpt = False,
        train: TrainOpt = False,
        stack: OptionalStackOpt = None,
        host: HostOpt = None,
        kubeconfig: KubeconfigOpt = None,
        sandbox: SandboxOpt = False,
        sandbox_dir: SandboxDirOpt = None,
        from_log: FromLogOpt = None,
        sku: SkuOpt = None,
        nodes: NodesOpt = None,
        partition: PartitionOpt = None,
        sweep: SweepOpt = False,
        drain: DrainOpt = False,
        resume: ResumeOpt = None,
        as_json: JsonOpt = False,
        junit: JunitOpt = None,
        fail_below: FailBelowOpt = None,
        warn_below: WarnBelowOpt = None,
        peer_floor: PeerFloorOpt = None,
        min_bytes: MinBytesOpt = None,
        max_bytes: MaxBytesOpt = None,
        report_path: ReportOpt = None,
        record: RecordOpt = None,
        min_tokens: MinTokensOpt = None,
        min_scaling: MinScalingOpt = None,
        no_scaling: NoScalingOpt = False,
        steps: StepsOpt = None,
    ) -> None:
        """Prove the fabric delivers: all_reduce bus bandwidth against the SKU's baseline.

        Exit codes: 0 pass (warnings included), 1 fail, 2 usage error (a flag, value, file or
        stack given wrong: fix the command), 3 inconclusive (it ran but proved nothing:
        unreachable, did not start, an incomplete log, nothing judged).

        `validate history -s STACK`: the trend.
        """
        from clusterctl.validate import CouldNotRun

        if ctx.invoked_subcommand is not None:
            return
        from clusterctl.cli.selection import stack_unless

        stack = stack_unless(stack, host, kubeconfig, sandbox, sandbox_dir, from_log)
        if train:
            raise typer.Exit(
                _train(
                    dict(nccl=nccl, sweep=sweep, drain=drain, resume=resume or None,
                         min_bytes=min_bytes, max_bytes=max_bytes, fail_below=fail_below,
                         warn_below=warn_below, peer_floor=peer_floor),
                    stack=stack, host=host, kubeconfig=kubeconfig,
                    sandbox=sandbox_workdir(sandbox, sandbox_dir), from_log=from_log, sku=sku,
                    nodes=nodes, partition=partition, min_tokens=min_tokens,
                    min_scaling=min_scaling, scaling=not no_scaling, steps=steps,
                    as_json=as_json, junit=junit, record=record, report=report_path,
                )
            )  # fmt: skip
        _refuse_train_only({"--min-tokens-per-gpu": min_tokens, "--min-scaling": min_scaling,
                            "--no-scaling": no_scaling, "--steps": steps})  # fmt: skip
        if not nccl:
            bail("say what to validate: --nccl (all-reduce bandwidth) or --train (a training run)")
        given = dict(
            stack=stack, host=host, kubeconfig=kubeconfig, sandbox=sandbox or sandbox_dir,
            from_log=from_log, sku=sku, partition=partition, sweep=sweep, drain=drain,
            min_bytes=min_bytes, max_bytes=max_bytes, resume=resume or None,
            peer_floor=peer_floor,
        )  # fmt: skip
        try:
            if junit is not None:  # before the run: a bad path must not cost the verdict
                writable_file(junit, "--junit")
            check_report_path(report_path)
            kept_as = history_stack(stack, record, sku)
            refuse_ignored(given)
            check_peer_floor(peer_floor)
            if resume:
                if sweep or drain:
                    raise UserError("--resume re-tests named nodes: leave out --sweep and --drain")
                raise typer.Exit(
                    _cancellable_resume(
                        stack, host, kubeconfig, sku, sandbox_workdir(sandbox, sandbox_dir), resume
                    )
                )
            min_bytes, max_bytes = sizes(min_bytes, max_bytes)
            with cancellable():  # Ctrl-C cancels the jobs started, then exits 130
                outcome = _run(
                    stack, host, kubeconfig, sandbox_workdir(sandbox, sandbox_dir), from_log,
                    sku, nodes, partition, sweep, drain, fail_below, warn_below, min_bytes,
                    max_bytes, peer_floor, quiet=as_json,
                )  # fmt: skip
        except UserError as exc:
            bail(*exc.problems)
        except CouldNotRun as exc:
            inconclusive(str(exc))
        from clusterctl.cli.report import report

        report(outcome, as_json=as_json, junit=junit)
        from clusterctl.cli.acceptance import keep_and_report

        keep_and_report(
            outcome, stack=kept_as, report=report_path, from_log=from_log, quiet=as_json,
            target=_target_label(stack, host, kubeconfig, sandbox or sandbox_dir, from_log),
        )  # fmt: skip
        raise typer.Exit(outcome.exit_code)


def _train(refused: dict, *, stack, host, kubeconfig, sandbox, from_log, sku, nodes, partition,
           min_tokens, min_scaling, scaling, steps, as_json, junit, record,
           report) -> int:  # fmt: skip
    from clusterctl.cli import validate_train
    from clusterctl.cli.common import resolve_target
    from clusterctl.validate import CouldNotRun

    try:
        if junit is not None:
            writable_file(junit, "--junit")
        validate_train.check_report(report)
        kept_as = history_stack(stack, record, sku)
        validate_train.refuse_for_train(refused)
        refuse_ignored(dict(stack=stack, host=host, kubeconfig=kubeconfig, sandbox=sandbox,
                            from_log=from_log, sku=sku, partition=partition))  # fmt: skip
        target = resolve_target(
            stack=stack, host=host, kubeconfig=kubeconfig, sandbox=sandbox, from_log=from_log,
            sku=sku, nodes=nodes, partition=partition,
        )  # fmt: skip
        with cancellable():  # Ctrl-C cancels the training jobs, then exits 130
            return validate_train.run(
                target=target, min_tokens=min_tokens, min_scaling=min_scaling, scaling=scaling,
                steps=steps, as_json=as_json, junit=junit, kept_as=kept_as, report=report,
            )  # fmt: skip
    except UserError as exc:
        bail(*exc.problems)
    except CouldNotRun as exc:
        inconclusive(str(exc))


def _target_label(stack, host, kubeconfig, sandbox, from_log) -> str:
    if from_log is not None:
        return "log stdin" if str(from_log) == "-" else f"log {from_log}"
    if stack is not None:
        return f"stack {stack}" + (f" via {kubeconfig}" if kubeconfig else "")
    return f"host {host}" if host else f"kubeconfig {kubeconfig}" if kubeconfig else "sandbox"


def _resume(stack, host, kubeconfig, sku, sandbox, nodes: list[str]) -> int:
    from clusterctl.cli.common import resolve_target
    from clusterctl.validate.run import Options, recheck_k8s, recheck_slurm
    from clusterctl.validate.targets import KubeTarget

    target = resolve_target(
        stack=stack, host=host, kubeconfig=kubeconfig, sku=sku, sandbox=sandbox, nodes=2
    )
    say = lambda m: err.print(f"[dim]{m}[/]", highlight=False)  # noqa: E731
    names = [n for item in nodes for n in item.split(",") if n]
    recheck = recheck_k8s if isinstance(target, KubeTarget) else recheck_slurm
    results = recheck(target, Options(say=say), names)  # type: ignore[arg-type]
    for r in results:
        out.print(("[green]" if r.passed else "[bold red]") + r.line() + "[/]", highlight=False)
    return 0 if all(r.passed for r in results) else 1


def refuse_mig_slices(stack: str, partition: str | None) -> None:
    """NCCL across MIG slices measures no fabric: a slice has no NVLink or network path of its
    own to share, so the bandwidth says nothing about the nodes (NVIDIA MIG user guide: no
    GPU-to-GPU P2P between MIG instances). Refused before anything is reached."""
    from clusterctl.platform import scheduler_of
    from clusterctl.spec.load import load_stack_spec
    from clusterctl.spec.model import field_path

    spec, _ = load_stack_spec(stack)
    sched = scheduler_of(spec.scheduler)
    name = partition or spec.default_partition.name
    for i, part in enumerate(spec.partitions):
        if part.name != name or not part.sharing:
            continue
        how = f" ({sched.partition_flag})" if sched.partition_flag else ""
        if part.sharing.mig:
            raise UserError(
                f"stack {stack} {field_path('partitions', i, 'sharing', 'mig')}: "
                f"{sched.node_group} {name} is cut into MIG slices, and NCCL across MIG slices "
                f"is not a bandwidth acceptance test; validate a whole-GPU one{how} or remove "
                "sharing.mig"
            )
        if part.sharing.shards and sched.gpu_resources:
            # time-sliced replicas of one request may be the same GPU (NVIDIA k8s-device-plugin,
            # time-slicing: no isolation, `failRequestsGreaterThanOne` off): NCCL then stops on a
            # duplicate GPU or measures GPUs shared with other jobs. Slurm's shards are a GRES
            # beside `gpu`: the NCCL job's whole GPUs are never shards at the same time.
            raise UserError(
                f"stack {stack} {field_path('partitions', i, 'sharing', 'shards')}: "
                f"{sched.node_group} {name} shares its GPUs by time-slicing, and NCCL on shared "
                f"GPUs is not a bandwidth acceptance test; validate a whole-GPU one{how} or remove "
                "sharing.shards"
            )


def _run(
    stack, host, kubeconfig, sandbox, from_log, sku, nodes, partition,
    sweep, drain, fail_below, warn_below, min_bytes, max_bytes, peer_floor, *, quiet: bool,
):  # fmt: skip
    from clusterctl.cli.common import resolve_target
    from clusterctl.validate.run import Options, validate, with_stack_overrides

    if stack is not None:
        refuse_mig_slices(stack, partition)
    target = resolve_target(
        stack=stack, host=host, kubeconfig=kubeconfig, sandbox=sandbox, from_log=from_log,
        sku=sku, nodes=nodes, partition=partition,
    )  # fmt: skip
    from clusterctl.validate.targets import KubeTarget

    if isinstance(target, KubeTarget):  # always said, also with --json (stderr)
        err.print(
            f"kubeconfig: {target.kubeconfig} ({target.kubeconfig_source})",
            highlight=False, soft_wrap=True, markup=False,
        )  # fmt: skip
    opts = Options(
        sweep=sweep, drain=drain, fail_below=fail_below, warn_below=warn_below,
        peer_floor=peer_floor, min_bytes=min_bytes, max_bytes=max_bytes,
        say=(lambda _: None) if quiet else (lambda m: err.print(f"[dim]{m}[/]", highlight=False)),
    )  # fmt: skip
    if stack is not None:
        from clusterctl.spec.load import load_stack_spec
        from clusterctl.spec.model import field_path

        spec, _ = load_stack_spec(stack)
        where = f"stack {stack} {field_path('validation', 'nccl')}"
        opts = with_stack_overrides(opts, spec.validation.nccl, where)
    return validate(target, opts)
