"""`clusterctl validate --train` on Slurm: the training program copied to the cluster, the same
job on one node (scaling's reference) and on all of them, parsed and judged.

The job is `srun` -> torchrun on every node -> clusterctl/train/gpt.py: in the NVIDIA PyTorch
container through pyxis on the cloud (config/versions.yaml training.container), under the node's
own python3 where the target says so (the VM sandbox: Debian's python3-torch, gloo on CPU).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clusterctl.train.judge import SCALING_FLOOR, Floor, TrainVerdict, judge
from clusterctl.train.model import PRESETS, Failure, Preset, TrainRun
from clusterctl.train.parse import parse
from clusterctl.validate import CouldNotRun
from clusterctl.validate.slurm_launcher import NodeLost, SlurmLauncher
from clusterctl.validate.targets import SlurmTarget
from clusterctl.validate.transport import Ssh

TEMPLATE = "validate/train.sbatch.j2"
PROGRAM = Path(__file__).parents[1] / "train" / "gpt.py"
REMOTE_PROGRAM = "gpucl_train.py"
RDZV_PORT = 29500
JOIN_TIMEOUT_S = 120
"""How long torchrun's rendezvous waits for every node (its default is 600 s)."""
COLLECTIVE_TIMEOUT_S = 90
"""How long a rank waits in a collective for a peer that stopped (gpt.py --timeout)."""


@dataclass(frozen=True)
class TrainJob:
    nodes: int
    procs_per_node: int
    preset: Preset
    program: str
    gpus_per_node: int = 0
    """GPUs Slurm allocates per node (0: a CPU run, as in the sandbox)."""
    env: dict[str, str] = field(default_factory=dict)
    partition: str | None = None
    nodelist: tuple[str, ...] = ()
    container_image: str | None = None
    python: str = "python3"
    time_limit_min: int = 20
    sku: str | None = None
    reservation: str | None = None
    name: str = "clusterctl-train"
    kind: str = "training"

    def args(self) -> list[str]:
        extra = [] if self.gpus_per_node else ["--threads", "1"]
        return [*self.preset.argv(), "--timeout", str(COLLECTIVE_TIMEOUT_S), *extra]

    def script(self, output: str) -> str:
        return render_sbatch(self, output)


def render_sbatch(job: TrainJob, output: str) -> str:
    """The batch script (pure: the same job gives the same text)."""
    from clusterctl.render.templates import environment

    env = environment()
    env.filters.setdefault("shquote", shlex.quote)
    return env.get_template(TEMPLATE).render(
        job_name=job.name, nodes=job.nodes, gpus_per_node=job.gpus_per_node,
        procs_per_node=job.procs_per_node, partition=job.partition,
        reservation=job.reservation, nodelist=",".join(job.nodelist),
        time_limit_min=job.time_limit_min, output=output, env=job.env, sku=job.sku,
        program=job.program, container_image=job.container_image, python=job.python,
        port=RDZV_PORT, join_timeout_s=JOIN_TIMEOUT_S,
        args=[shlex.quote(a) for a in job.args()],
    )  # fmt: skip


@dataclass(frozen=True)
class TrainOptions:
    floor: Floor
    min_scaling: float | None = None
    """None: the target's default (SCALING_FLOOR on GPUs; not judged on the sandbox's CPUs)."""
    scaling: bool = True
    """Run the one-node reference first (weak scaling); off: the N-node run alone."""
    container_image: str | None = None
    timeout_minutes: int = 20
    steps: int | None = None
    say: Callable[[str], None] = lambda _: None


@dataclass(frozen=True)
class TrainOutcome:
    verdict: TrainVerdict
    preset: str
    sku: str | None
    target: str
    command: str
    runs: tuple[TrainRun, ...] = ()

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code


def cpu_target(target: SlurmTarget) -> bool:
    """A target with no GPUs (the VM sandbox's probe benchmark): gloo on one CPU rank per node."""
    return not target.benchmark.one_rank_per_gpu


CPU_SCALING_NOTE = (
    "scaling measured, not judged: the sandbox's nodes share the host's CPU cores, so per-rank "
    "speed falls as nodes are added for a reason no cluster has"
)


def make_job(target: SlurmTarget, opts: TrainOptions, program: str, env: dict[str, str]):
    cpu = cpu_target(target)
    preset = PRESETS["cpu" if cpu else "gpu"]
    if opts.steps:
        preset = replace(preset, steps=opts.steps)
    return TrainJob(
        nodes=target.nodes,
        procs_per_node=1 if cpu else target.gpus_per_node,
        gpus_per_node=0 if cpu else target.gpus_per_node,
        preset=preset,
        program=program,
        env={"OMP_NUM_THREADS": "1"} if cpu else env,
        partition=target.partition,
        nodelist=target.node_names,
        container_image=None if cpu else opts.container_image,
        python=target.python if cpu else "python3",
        time_limit_min=opts.timeout_minutes,
        sku=target.sku,
    )


def train_slurm(
    target: SlurmTarget, opts: TrainOptions, env: dict[str, str], *, launcher: Any = None
) -> TrainOutcome:
    """Launch the one-node reference (when scaling is asked for and there is more than one node),
    then the N-node job; judge both. NodeLost from the launcher is a failed run naming the node."""
    if launcher is None:
        ssh = Ssh(target.ssh)
        opts.say(f"connecting to {target.ssh.label}")
        ssh.check_reachable()
        launcher = SlurmLauncher(ssh, remote_dir=target.remote_dir, keep_files=target.keep_files)
    program = f"{target.remote_dir}/{REMOTE_PROGRAM}"
    put = launcher.ssh.run(
        f"mkdir -p {shlex.quote(target.remote_dir)} && cat > {shlex.quote(program)}",
        input=PROGRAM.read_text(),
        check=False,
    )
    if put.returncode != 0:
        raise CouldNotRun(f"could not copy the training program to {program}: {put.stderr.strip()}")
    job = make_job(target, opts, program, env)
    cpu = cpu_target(target)
    runs: list[TrainRun] = []
    try:
        single = None
        if opts.scaling and job.nodes > 1:
            one = replace(job, nodes=1, nodelist=job.nodelist[:1], name="clusterctl-train-1")
            opts.say(f"training on 1 node ({', '.join(one.nodelist) or 'any'}): the reference")
            single = _run(launcher, one)
            runs.append(single)
            if single.failures or not single.ranks:
                return _outcome(judge(single, opts.floor), job, target, runs)
        opts.say(f"training on {job.nodes} node(s) ({', '.join(job.nodelist) or 'any'})")
        multi = _run(launcher, job)
        runs.append(multi)
    finally:
        if not target.keep_files:
            d = shlex.quote(target.remote_dir)
            launcher.ssh.run(f"rm -f {shlex.quote(program)}; rmdir {d} 2>/dev/null || true",
                             check=False)  # fmt: skip
    min_scaling = opts.min_scaling
    note = ""
    if min_scaling is None:
        min_scaling, note = (
            (None, CPU_SCALING_NOTE if single else "") if cpu else (SCALING_FLOOR, "")
        )
    verdict = judge(multi, opts.floor, single=single, scaling_floor=min_scaling, scaling_note=note)
    return _outcome(verdict, job, target, runs)


def _run(launcher: Any, job: TrainJob) -> TrainRun:
    try:
        result = launcher.run(job, timeout_s=job.time_limit_min * 60 + 120)
    except NodeLost as exc:
        return TrainRun(
            nodes=job.nodelist,
            failures=tuple(
                Failure(
                    "lost", n, f"lost mid-run: Slurm reports it {state} (the job was cancelled)"
                )
                for n, state in sorted(exc.states.items())
            ),
        )
    run = parse(result.output, job.nodelist)
    if result.state == "COMPLETED":
        return run
    if not run.failures:
        return replace(run, failures=(Failure("crash", None, f"job {result.job_id} ended "
                                              f"{result.state}"),))  # fmt: skip
    if any(f.kind == "lost" for f in run.failures):
        # Silence is not proof: a node Slurm now sees as down or not responding is the one lost;
        # the others went quiet because the job was ended around them.
        trouble = launcher.node_trouble(list(job.nodelist))
        if trouble:
            kept = [f for f in run.failures if f.kind != "lost"]
            lost = [Failure("lost", n, f"lost mid-run: Slurm reports it {state}")
                    for n, state in sorted(trouble.items())]  # fmt: skip
            run = replace(run, failures=tuple(kept + lost))
    return run


def _outcome(verdict: TrainVerdict, job: TrainJob, target: SlurmTarget, runs) -> TrainOutcome:
    return TrainOutcome(
        verdict=verdict,
        preset="gpu" if job.gpus_per_node else "cpu",
        sku=target.sku,
        target=target.label or target.ssh.label,
        command=f"srun -> torchrun --nnodes={job.nodes} --nproc-per-node={job.procs_per_node} "
        + " ".join(job.args()),
        runs=tuple(runs),
    )
