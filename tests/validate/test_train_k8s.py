"""`clusterctl validate --train` on Kubernetes: the rendered MPIJob (against the MPI operator's CRD,
its program ConfigMap, NODE_NAME, the launcher's mpirun line run by bash), and the command end to
end against the fake API server (tests/validate/fake_kube.py) whose launcher logs are the recorded
training outputs of tests/data/train/ as mpirun prints them (no node list, no task labels)."""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from clusterctl.render.kubernetes import (
    RDZV_JOIN_TIMEOUT_S,
    RDZV_PORT,
    TRAIN_COLLECTIVE_TIMEOUT_S,
    TRAIN_PROGRAM,
    k8s_image,
    nccl_launcher,
    render_k8s_bundle,
    train_mpijob,
)
from clusterctl.spec.load import load_stack_spec
from clusterctl.train.judge import Floor
from clusterctl.train.model import PRESETS
from clusterctl.validate import train
from clusterctl.validate import train_k8s as train_k8s_module
from clusterctl.validate.k8s_launcher import K8sLauncher, build_mpijob
from clusterctl.validate.targets import KubeTarget, launcher_for_sku
from clusterctl.validate.train import TrainOptions
from clusterctl.validate.train_k8s import train_documents, train_k8s
from tests.crd_schema import validate
from tests.validate.fake_kube import FakeKubeApi, node

TRAIN = Path(__file__).resolve().parents[1] / "data" / "train"
SKU = "Standard_ND96isr_H100_v5"
NAMES = [f"aks-gpu-{i}" for i in range(3)]
IMAGE = "nvcr.io/nvidia/pytorch:25.12-py3"


def _job(sku: str = SKU, workers: int = 2, **opts) -> tuple[dict, list[dict]]:
    return train_documents(
        launcher_for_sku(sku, workers), TrainOptions(floor=Floor(None, "none"), **opts),
        name="clusterctl-train", image=IMAGE, program=TRAIN_PROGRAM.read_text(),
    )  # fmt: skip


def _pod(job: dict, role: str) -> dict:
    return job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]


# -- the rendered job -----------------------------------------------------------------------


@pytest.mark.parametrize("sku", [SKU, "Standard_ND96asr_v4", "p5.48xlarge"])
def test_the_training_mpijob_matches_the_crd(sku: str) -> None:
    job, _ = _job(sku)
    assert job["apiVersion"] == "kubeflow.org/v2beta1" and job["kind"] == "MPIJob"
    assert validate(job) == []
    assert job["spec"]["slotsPerWorker"] == 1


def test_the_crd_check_reaches_the_workers_pod_template() -> None:
    """The schema check above would catch a broken worker (it is not a pass by default)."""
    job, _ = _job()
    _pod(job, "Worker")["containers"][0]["readinessProbe"]["tcpSocket"]["bogus"] = 1
    _pod(job, "Worker")["containers"][0]["env"][0]["valueFrom"] = "spec.nodeName"
    problems = validate(job)
    assert any("tcpSocket.bogus: unknown field" in p for p in problems), problems
    assert any("valueFrom" in p and "is not object" in p for p in problems), problems


@pytest.mark.integration
def test_the_pod_templates_pass_kubernetes_validate() -> None:
    kv = pytest.importorskip("kubernetes_validate")
    from tests.validate.test_k8s import _pod_templates

    job, (configmap,) = _job()
    templates = _pod_templates(job)
    assert [t["metadata"]["name"].rsplit("-", 1)[-1] for t in templates] == ["launcher", "worker"]
    for doc in [*templates, configmap]:
        kv.validate(doc, "1.31.0", strict=True)  # raises on any schema error or unknown field
    # and it would catch a broken worker: an unknown field in its readiness probe
    templates[1]["template"]["spec"]["containers"][0]["readinessProbe"]["bogus"] = 1
    with pytest.raises(kv.ValidationError):
        kv.validate(templates[1], "1.31.0", strict=True)


@pytest.mark.parametrize("sku", [SKU, "p5.48xlarge"])
def test_workers_mount_the_program_and_name_their_node(sku: str) -> None:
    job, (configmap,) = _job(sku)
    ns = job["metadata"]["namespace"]
    assert configmap["kind"] == "ConfigMap" and configmap["metadata"]["namespace"] == ns
    assert configmap["metadata"]["labels"]["gpu-clusters/validation"] == "train"
    assert configmap["data"]["gpt.py"] == TRAIN_PROGRAM.read_text()  # the program, byte for byte
    pod = _pod(job, "Worker")
    (c,) = pod["containers"]
    (volume,) = [
        v for v in pod["volumes"] if v.get("configMap", {}).get("name") == "clusterctl-train"
    ]
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    assert mounts[volume["name"]]["mountPath"] == "/opt/clusterctl-train"
    assert {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}} in c[
        "env"
    ]
    # the ranks start through sshd, which passes on no container env: sshd sets it per session
    assert 'exec /usr/sbin/sshd -De -o "SetEnv=NODE_NAME=$NODE_NAME"' in c["args"][-1]
    assert c["readinessProbe"] == {"tcpSocket": {"port": 22}, "periodSeconds": 5}
    assert c["image"] == IMAGE
    # the rest of the worker as the NCCL job's: GPUs, fabric, tolerations, placement, shm
    nccl = build_mpijob(launcher_for_sku(sku, 2))
    ncclw = _pod(nccl, "Worker")
    assert c["resources"] == ncclw["containers"][0]["resources"]
    assert c["securityContext"] == ncclw["containers"][0]["securityContext"]
    assert (pod["tolerations"], pod["nodeSelector"]) == (
        ncclw["tolerations"],
        ncclw["nodeSelector"],
    )
    assert [v for v in pod["volumes"] if v["name"] != volume["name"]] == ncclw["volumes"]
    launcher = _pod(job, "Launcher")["containers"][0]
    ncclenv = {e["name"]: e["value"] for e in _pod(nccl, "Launcher")["containers"][0]["env"]}
    env = {e["name"]: e["value"] for e in launcher["env"]}
    for debug_only in ("NCCL_ALGO", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS"):  # the NCCL test's own
        ncclenv.pop(debug_only)
    assert env == ncclenv


def _argv_run_by_bash(job: dict, tmp_path: Path, head: str) -> list[str]:
    """Run the launcher's script with bash: the hostfile and mpirun replaced by stand-ins that
    record what they are given."""
    script = _pod(job, "Launcher")["containers"][0]["args"][-1]
    hostfile = tmp_path / "hostfile"
    hostfile.write_text(f"{head} slots=1\nother-worker.x.svc slots=1\n")
    mpirun = tmp_path / "mpirun"
    mpirun.write_text("#!/usr/bin/env python3\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    mpirun.chmod(0o755)
    ssh = tmp_path / "ssh"  # `command -v ssh` finds one: nothing is installed
    ssh.write_text("#!/bin/sh\n")
    ssh.chmod(0o755)
    script = script.replace("/etc/mpi/hostfile)", f"{hostfile})").replace(
        "/usr/local/mpi/bin/mpirun", str(mpirun)
    )
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return ["/usr/local/mpi/bin/mpirun", *json.loads(proc.stdout)]


def test_the_launcher_runs_one_torchrun_per_worker_with_the_first_worker_as_rendezvous(
    tmp_path: Path,
) -> None:
    job, _ = _job()
    head = "clusterctl-train-worker-0.clusterctl-train.nccl-tests.svc"
    argv = _argv_run_by_bash(job, tmp_path, head)
    env = sorted(e["name"] for e in _pod(job, "Launcher")["containers"][0]["env"])
    forwarded = [x for name in ["PATH", "LD_LIBRARY_PATH", *env] for x in ("-x", name)]
    assert argv == [
        "/usr/local/mpi/bin/mpirun", "--allow-run-as-root", "--hostfile", "/etc/mpi/hostfile",
        "-np", "2", "--map-by", "ppr:1:node", "--bind-to", "none", *forwarded,
        "python3", "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=8",
        "--rdzv-backend=c10d", f"--rdzv-endpoint={head}:29500", "--rdzv-id=clusterctl-train",
        "--rdzv-conf=join_timeout=120", "--max-restarts=0", "/opt/clusterctl-train/gpt.py",
        *PRESETS["gpu"].argv(), "--timeout", "90",
    ]  # fmt: skip
    # the same timeouts and port as the Slurm job
    assert (RDZV_PORT, RDZV_JOIN_TIMEOUT_S, TRAIN_COLLECTIVE_TIMEOUT_S) == (
        train.RDZV_PORT, train.JOIN_TIMEOUT_S, train.COLLECTIVE_TIMEOUT_S,
    )  # fmt: skip


def test_steps_and_the_reference_size_reach_the_job(tmp_path: Path) -> None:
    job, _ = _job(workers=1, steps=7)
    argv = _argv_run_by_bash(job, tmp_path, "w-0")
    assert argv[argv.index("-np") + 1] == "1" and "--nnodes=1" in argv
    assert argv[argv.index("--steps") + 1] == "7"
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 1


def test_the_image_is_spelled_for_kubernetes() -> None:
    assert k8s_image("nvcr.io#nvidia/pytorch:25.12-py3") == "nvcr.io/nvidia/pytorch:25.12-py3"
    assert k8s_image("nvcr.io/nvidia/pytorch:25.12-py3") == "nvcr.io/nvidia/pytorch:25.12-py3"


@pytest.mark.parametrize("stack", ["aks-h100", "aws-p5"])
def test_plan_out_writes_the_job_validate_creates(stack: str) -> None:
    spec, _ = load_stack_spec(stack)
    text = render_k8s_bundle(spec, stack)["validation/train-mpijob.yaml"]
    assert text == train_mpijob(spec, stack)
    configmap, written = [d for d in yaml.safe_load_all(text) if d]
    job, (cm,) = train_documents(
        dict(nccl_launcher(spec, stack)), TrainOptions(floor=Floor(None, "none")),
        name="clusterctl-train", image=IMAGE, program=TRAIN_PROGRAM.read_text(),
    )  # fmt: skip
    assert written["spec"] == job["spec"] and configmap["data"] == cm["data"]
    assert validate(written) == []


# -- train_k8s against the fake API server ----------------------------------------------------


def mpirun_log(path: Path, hosts: list[str]) -> str:
    """A recorded Slurm output as the launcher's log: mpirun prints no node list and no task
    labels; its nodes are the hosts the fake placed the workers on (a shorter host list keeps the
    first tasks, with rank 0's world size scaled to match)."""
    lines = path.read_text().splitlines()
    (names,) = [x.split()[1:] for x in lines if x.startswith("GPUCL-TRAIN-NODES")]
    out = []
    for line in lines:
        m = re.match(r"^(\d+): (.*)$", line)
        if not m or int(m.group(1)) >= len(hosts):
            continue
        text = m.group(2)
        for old, new in zip(names, hosts, strict=False):
            text = text.replace(f'"{old}"', f'"{new}"')
        if text.startswith("GPUCL-TRAIN-START "):
            body = json.loads(text.split(" ", 1)[1])
            body["world"] = body["world"] * len(hosts) // len(names)
            text = f"GPUCL-TRAIN-START {json.dumps(body)}"
        out.append(text)
    return "\n".join(out) + "\n"


def fake_cluster(run_file: str, *, cordoned: bool = False) -> FakeKubeApi:
    def log(job: str, hosts: list[str]) -> str:
        reference = job.endswith("-1")  # the one-worker reference runs on a healthy node
        return mpirun_log(TRAIN / ("healthy-2-node.out" if reference else run_file), hosts)

    nodes = [node(n, {}, cordoned=cordoned) for n in NAMES]
    return FakeKubeApi(nodes, launcher_log=log)


def kube_target() -> KubeTarget:
    return KubeTarget("/nonexistent/kubeconfig", launcher_for_sku(SKU, 2))


def test_a_healthy_run_passes_after_the_one_worker_reference() -> None:
    api = fake_cluster("healthy-2-node.out")
    outcome = train_k8s(kube_target(), TrainOptions(floor=Floor(None, "none")), client=api)
    v = outcome.verdict
    assert v.status == "pass" and outcome.exit_code == 0, v.reasons
    assert (v.single.nodes, v.metrics.nodes) == (1, 2) and v.scaling > 0.9
    assert {r.node for r in outcome.runs[-1].ranks} == {"aks-gpu-0", "aks-gpu-1"}
    created = [b for verb, _, b in api.requests if verb == "POST"]
    deleted = [p.rsplit("/", 1)[1] for verb, p, _ in api.requests if verb == "DELETE"]
    assert created == ["clusterctl-train-1", "clusterctl-train"] and deleted == created
    # the namespace and the program's ConfigMap are applied before each job is created
    verbs = [verb for verb, _, _ in api.requests if verb in ("APPLY", "POST")]
    assert verbs == ["APPLY", "POST", "APPLY", "POST"]
    (cm,) = [d for d in api.applied if d["kind"] == "ConfigMap"][-1:]
    assert cm["metadata"]["name"] == "clusterctl-train"
    assert cm["data"]["gpt.py"] == TRAIN_PROGRAM.read_text()
    assert outcome.command.startswith("/usr/local/mpi/bin/mpirun --allow-run-as-root")
    assert api.jobs["clusterctl-train"]["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    assert api.jobs["clusterctl-train-1"]["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 1


def test_no_scaling_runs_the_job_alone() -> None:
    api = fake_cluster("healthy-2-node.out")
    opts = TrainOptions(floor=Floor(None, "none"), scaling=False)
    outcome = train_k8s(kube_target(), opts, client=api)
    assert outcome.verdict.status == "pass" and outcome.verdict.single is None
    assert [b for verb, _, b in api.requests if verb == "POST"] == ["clusterctl-train"]


def test_a_straggler_fails_naming_its_node() -> None:
    api = fake_cluster("straggler-2-node.out")
    outcome = train_k8s(kube_target(), TrainOptions(floor=Floor(None, "none")), client=api)
    assert outcome.exit_code == 1 and outcome.verdict.bad_nodes == ("aks-gpu-1",)


def test_a_worker_that_stopped_reporting_fails_the_run() -> None:
    def log(job: str, hosts: list[str]) -> str:
        full = mpirun_log(TRAIN / "healthy-2-node.out", hosts)
        return "\n".join(x for x in full.splitlines() if '"rank": 1' not in x) + "\n"

    api = FakeKubeApi([node(n, {}) for n in NAMES], launcher_log=log)
    opts = TrainOptions(floor=Floor(None, "none"), scaling=False)
    outcome = train_k8s(kube_target(), opts, client=api)
    assert outcome.exit_code == 1
    (lost,) = outcome.verdict.failures
    assert lost.kind == "lost" and "1 of 2 ranks stopped reporting" in lost.detail


def test_ctrl_c_deletes_the_job() -> None:
    class Interrupted(FakeKubeApi):
        def get_mpijob(self, namespace, name):
            raise KeyboardInterrupt

    api = Interrupted([node(n, {}) for n in NAMES])
    with pytest.raises(KeyboardInterrupt):
        train_k8s(kube_target(), TrainOptions(floor=Floor(None, "none")), client=api)
    assert [p.rsplit("/", 1)[1] for v, p, _ in api.requests if v == "DELETE"] == [
        "clusterctl-train-1"
    ]


# -- the command, end to end ------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s


@pytest.fixture
def kube(monkeypatch, tmp_path: Path):
    """`validate --train --kubeconfig FILE` with kubectl replaced by the fake API server."""
    clock = Clock()
    monkeypatch.setattr(
        train_k8s_module, "K8sLauncher",
        functools.partial(K8sLauncher, sleep=clock.sleep, clock=clock),
    )  # fmt: skip
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")

    def use(api: FakeKubeApi) -> list[str]:
        seen: list[str] = []

        def client(path: str) -> FakeKubeApi:
            seen.append(path)
            return api

        monkeypatch.setattr(train_k8s_module, "KubectlClient", client)
        return seen

    args = ["--train", "--kubeconfig", str(kubeconfig), "--sku", SKU, "--nodes", "2", "--json"]
    return use, args, str(kubeconfig)


def test_validate_train_kubeconfig_passes_on_a_healthy_cluster(cli, kube) -> None:
    use, args, kubeconfig = kube
    seen = use(fake_cluster("healthy-2-node.out"))
    result = cli(*args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["check"], data["status"], data["bad_nodes"]) == ("train", "pass", [])
    assert data["metrics"]["nodes"] == 2 and data["single_node"]["nodes"] == 1
    assert data["sku"] == SKU and kubeconfig in data["target"]
    assert seen == [kubeconfig]  # kubectl is given the named file


def test_validate_train_kubeconfig_names_the_straggler(cli, kube) -> None:
    use, args, _ = kube
    use(fake_cluster("straggler-2-node.out"))
    result = cli(*args)
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "fail" and data["bad_nodes"] == ["aks-gpu-1"]
    assert any(r.startswith("aks-gpu-1: rank 1") for r in data["reasons"]), data["reasons"]


def _could_not_run(cli, args: list[str]) -> str:
    """Exit 3 (inconclusive) with one error line on stderr (after the progress lines), and that
    line as the one problem of --json's error object."""
    result = cli(*[a for a in args if a != "--json"])
    assert result.exit_code == 3, result.output
    lines = [x for x in result.stderr.strip().splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("error: ")]
    assert errors == lines[-1:], result.stderr
    as_json = cli(*args)
    assert as_json.exit_code == 3
    assert json.loads(as_json.stdout)["problems"] == [errors[0].removeprefix("error: ")]
    return errors[0]


def test_unschedulable_workers_could_not_run(cli, kube) -> None:
    use, args, _ = kube
    api = fake_cluster("healthy-2-node.out", cordoned=True)
    use(api)
    line = _could_not_run(cli, args)
    assert "did not start" in line and "unschedulable" in line, line
    assert [p.rsplit("/", 1)[1] for v, p, _ in api.requests if v == "DELETE"] == [
        "clusterctl-train-1"
    ] * 2  # the job it could not start is deleted (once per run of the command)


def test_an_image_pull_that_never_finishes_could_not_run(cli, kube) -> None:
    class Pulling(FakeKubeApi):
        def list_pods(self, namespace, selector):
            super().list_pods(namespace, selector)
            if selector.endswith("job-role=launcher"):
                return []
            waiting = {"reason": "ContainerCreating"}
            return [{"metadata": {"name": "clusterctl-train-1-worker-0"},
                     "spec": {"nodeName": "aks-gpu-0"},
                     "status": {"phase": "Pending", "containerStatuses": [
                         {"image": IMAGE, "state": {"waiting": waiting}}]}}]  # fmt: skip

        def get_mpijob(self, namespace, name):
            job = super().get_mpijob(namespace, name)
            job["status"]["conditions"] = job["status"]["conditions"][:1]  # never finishes
            return job

    use, args, _ = kube
    use(Pulling([node(n, {}) for n in NAMES]))
    line = _could_not_run(cli, args)
    assert f"the image pull of {IMAGE} on pod clusterctl-train-1-worker-0" in line, line


def test_the_command_shown_is_the_launchers() -> None:
    job, _ = _job()
    cmd = train_k8s_module.launcher_command(job)
    assert shlex.split(cmd.replace('"$head"', "HEAD"))[-len(PRESETS["gpu"].argv()) - 2 :] == [
        *PRESETS["gpu"].argv(), "--timeout", "90",
    ]  # fmt: skip
