"""`clusterctl validate --train` on Kubernetes (EKS/AKS stacks, `--kubeconfig`): the training job
as an MPIJob, on one worker (scaling's reference) and on all of them, parsed and judged.

The job is mpirun in the launcher -> one torchrun per worker (through the workers' sshd) ->
clusterctl/train/gpt.py, in the NVIDIA PyTorch container (config/versions.yaml
training.container.image). The program travels in a ConfigMap the workers mount; the MPIJob is
rendered by clusterctl.render.kubernetes.train_mpijob_manifest, the text `plan --out` writes as
k8s/validation/train-mpijob.yaml. The ConfigMap (labelled gpu-clusters/validation=train) is
applied with the job's namespace before each run and stays, a few KB, updated by the next run;
the MPIJobs are always deleted (Ctrl-C included), as for --nccl.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from typing import Any

import yaml

from clusterctl.train.judge import SCALING_FLOOR, judge
from clusterctl.train.model import PRESETS, Failure, TrainRun
from clusterctl.train.parse import parse
from clusterctl.validate.k8s_launcher import K8sLauncher, KubectlClient, prerequisites
from clusterctl.validate.targets import KubeTarget
from clusterctl.validate.train import TrainOptions, TrainOutcome

TRAIN_IMAGE_BYTES = 12 << 30
"""The pull window's image size when versions.yaml gives none (training.container.imageBytes):
the NGC PyTorch images are larger than the nccl-tests ones (k8s_launcher DEFAULT_IMAGE_BYTES)."""
REFERENCE_SUFFIX = "-1"


def train_documents(
    launcher: dict[str, Any], opts: TrainOptions, *, name: str, image: str, program: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the MPIJob, the ConfigMap with the program) for `launcher`'s workers."""
    from clusterctl.render.kubernetes import train_args, train_mpijob_manifest

    preset = PRESETS["gpu"]
    if opts.steps:
        preset = replace(preset, steps=opts.steps)
    text = train_mpijob_manifest(
        launcher,  # type: ignore[arg-type]
        image=image,
        program=program,
        args=train_args(preset.argv()),
        name=name,
        deadline_s=opts.timeout_minutes * 60,
    )
    docs = [d for d in yaml.safe_load_all(text) if d]
    (job,) = [d for d in docs if d["kind"] == "MPIJob"]
    return job, [d for d in docs if d["kind"] != "MPIJob"]


def train_k8s(target: KubeTarget, opts: TrainOptions, *, client: Any = None) -> TrainOutcome:
    """Run the one-worker reference (when scaling is asked for and there is more than one
    worker), then the job on every worker; judge both. A job that cannot start (unschedulable,
    an image pull that never finishes) raises CouldNotRun from the launcher: exit 2."""
    from clusterctl.render.kubernetes import TRAIN_MPIJOB_NAME, TRAIN_PROGRAM, training_image
    from clusterctl.spec.catalog import catalog

    cat = catalog()
    image = opts.container_image or training_image(cat)
    container = (cat.versions.get("training") or {}).get("container") or {}
    client = client or KubectlClient(target.kubeconfig)
    k8s = K8sLauncher(
        client, image_bytes=int(container.get("imageBytes") or TRAIN_IMAGE_BYTES), say=opts.say
    )
    launcher = dict(target.launcher)
    program = TRAIN_PROGRAM.read_text()
    workers = int(launcher["workers"])
    job, configmaps = train_documents(
        launcher, opts, name=TRAIN_MPIJOB_NAME, image=image, program=program
    )
    needs = prerequisites(launcher) + configmaps
    timeout_s = opts.timeout_minutes * 60
    runs: list[TrainRun] = []
    single = None
    if opts.scaling and workers > 1:
        one, _ = train_documents(
            {**launcher, "workers": 1}, opts, name=TRAIN_MPIJOB_NAME + REFERENCE_SUFFIX,
            image=image, program=program,
        )  # fmt: skip
        opts.say(f"training on 1 node (MPIJob {one['metadata']['name']}): the reference")
        single = _run(k8s, one, timeout_s, needs)
        runs.append(single)
        if single.failures or not single.ranks:
            return _outcome(judge(single, opts.floor), job, target, runs)
    opts.say(f"training on {workers} node(s) (MPIJob {job['metadata']['name']})")
    multi = _run(k8s, job, timeout_s, needs)
    runs.append(multi)
    min_scaling = SCALING_FLOOR if opts.min_scaling is None else opts.min_scaling
    verdict = judge(multi, opts.floor, single=single, scaling_floor=min_scaling)
    return _outcome(verdict, job, target, runs)


def _run(k8s: K8sLauncher, job: dict[str, Any], timeout_s: int, needs: list) -> TrainRun:
    log = k8s.run(job, timeout_s=timeout_s, needs=needs)
    run = parse(log)
    if run.ranks and not run.start:  # ranks reported, but rank 0's start line is missing
        missing = Failure("crash", None, "rank 0's start line is missing: cannot tell how many "
                                         "ranks were to report")  # fmt: skip
        return replace(run, failures=(*run.failures, missing))
    return run


def launcher_command(job: dict[str, Any]) -> str:
    """The launcher's mpirun line, as the container runs it."""
    container = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    script = container["args"][-1]
    lines = [line.strip() for line in script.splitlines() if line.strip().startswith("exec ")]
    return lines[-1].removeprefix("exec ") if lines else shlex.join(container.get("args", []))


def _outcome(verdict, job: dict[str, Any], target: KubeTarget, runs) -> TrainOutcome:
    return TrainOutcome(
        verdict=verdict,
        preset="gpu",
        sku=target.sku,
        target=target.label or f"kubeconfig {target.kubeconfig}",
        command=launcher_command(job),
        runs=tuple(runs),
    )
