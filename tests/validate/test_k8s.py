"""The MPIJob manifest (kubernetes-validate) and the Kubernetes launcher's create / wait / log /
cleanup logic, replayed from recorded API responses: no kube-apiserver is installable here."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterctl.validate import CouldNotRun
from clusterctl.validate.k8s_launcher import K8sLauncher, build_mpijob
from clusterctl.validate.run import Options, validate_k8s
from clusterctl.validate.targets import KubeTarget, launcher_for_sku
from tests.validate.conftest import DATA, HERE

FIXTURES = HERE / "k8s"


class RecordedClient:
    def __init__(self, name: str) -> None:
        self.rec = json.loads((FIXTURES / f"{name}.json").read_text())
        self.calls: list[tuple[str, ...]] = []
        self.created: dict | None = None
        self.applied: list[dict] = []

    def apply(self, docs):
        self.calls.append(("apply", *sorted(d["kind"] for d in docs)))
        self.applied += docs

    def create_mpijob(self, namespace, manifest):
        self.calls.append(("create", namespace, manifest["metadata"]["name"]))
        self.created = manifest
        return self.rec["create"]

    def get_mpijob(self, namespace, name):
        self.calls.append(("get", namespace, name))
        gets = self.rec["get"]
        return gets.pop(0) if len(gets) > 1 else gets[0]

    def list_pods(self, namespace, selector):
        role = selector.rsplit("=", 1)[1]
        self.calls.append(("pods", namespace, role))
        return self.rec["pods"][role]

    def pod_log(self, namespace, pod):
        self.calls.append(("log", namespace, pod))
        name = self.rec["logs"][pod]
        return (DATA / name).read_text() if name else ""

    def delete_mpijob(self, namespace, name):
        self.calls.append(("delete", namespace, name))


def target(sku="Standard_ND96isr_H100_v5", nodes=2) -> KubeTarget:
    return KubeTarget("/nonexistent/kubeconfig", launcher_for_sku(sku, nodes))


class Clock:
    def __init__(self, step: float) -> None:
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_succeeded_run_is_judged_and_cleaned_up() -> None:
    client = RecordedClient("succeeded")
    outcome = validate_k8s(target(), Options(), client=client)
    assert outcome.status == "pass"
    kinds = [c[0] for c in client.calls]
    assert kinds[:2] == ["apply", "create"] and kinds[-1] == "delete"
    # the namespace and the topology ConfigMap are applied before the MPIJob, so a cluster made
    # elsewhere (--kubeconfig) has them
    assert client.calls[0] == ("apply", "ConfigMap", "Namespace")
    assert ("log", "nccl-tests", "clusterctl-nccl-launcher-x7k2p") in client.calls
    # the Ring run, then the same run with NCCL's default algorithm: each created and deleted
    created = [c[2] for c in client.calls if c[0] == "create"]
    assert created == ["clusterctl-nccl", "clusterctl-nccl-default"]
    assert [c[2] for c in client.calls if c[0] == "delete"] == created
    assert outcome.default_algorithm is not None and outcome.default_algorithm.status == "pass"


def test_unschedulable_workers_could_not_run_and_still_cleaned_up() -> None:
    client = RecordedClient("unschedulable")
    launcher = K8sLauncher(client, sleep=lambda _: None, clock=Clock(60), start_timeout_s=300)
    manifest = build_mpijob(launcher_for_sku("Standard_ND96isr_H100_v5", 2))
    with pytest.raises(CouldNotRun, match=r"did not start.*Insufficient nvidia.com/gpu"):
        launcher.run(manifest)
    assert client.calls[-1][0] == "delete"


def test_failed_launcher_without_output_could_not_run() -> None:
    client = RecordedClient("failed")
    with pytest.raises(CouldNotRun, match=r"failed: MPIJobFailed.*BackoffLimitExceeded"):
        K8sLauncher(client, sleep=lambda _: None).run(build_mpijob(target().launcher))
    assert client.calls[-1][0] == "delete"


@pytest.mark.parametrize(
    ("sku", "fabric_resource", "env_key"),
    [
        ("Standard_ND96isr_H100_v5", "rdma/ib", "NCCL_TOPO_FILE"),
        ("p5.48xlarge", "vpc.amazonaws.com/efa", "FI_PROVIDER"),
    ],
)
def test_manifest_carries_the_skus_resources_and_env(sku, fabric_resource, env_key) -> None:
    m = build_mpijob(launcher_for_sku(sku, 2))
    assert m["apiVersion"] == "kubeflow.org/v2beta1" and m["kind"] == "MPIJob"
    worker = m["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    pod = worker["template"]["spec"]
    c = pod["containers"][0]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert fabric_resource in c["resources"]["limits"]
    assert c["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert pod["volumes"][0]["emptyDir"]["medium"] == "Memory"
    assert {"name": "dshm", "mountPath": "/dev/shm"} in c["volumeMounts"]
    launcher = m["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in launcher["env"]}
    assert env["NCCL_ALGO"] == "Ring" and env_key in env
    assert (env["NCCL_DEBUG"], env["NCCL_DEBUG_SUBSYS"]) == ("INFO", "INIT,NET,ENV")
    args = launcher["args"]
    assert args[args.index("-np") + 1] == "16"
    image_env = ["PATH", "LD_LIBRARY_PATH", "LD_PRELOAD"][: 3 if sku.startswith("p5") else 2]
    assert [args[i + 1] for i, a in enumerate(args) if a == "-x"] == [*image_env, *sorted(env)]


def _pod_templates(m: dict) -> list[dict]:
    """MPIJob is a CRD kubernetes-validate has no schema for; its pod templates are core API."""
    return [
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": f"{m['metadata']['name']}-{role.lower()}"},
            "template": spec["template"],
        }
        for role, spec in m["spec"]["mpiReplicaSpecs"].items()
    ]


@pytest.mark.integration
@pytest.mark.parametrize("sku", ["Standard_ND96isr_H100_v5", "p5.48xlarge"])
def test_manifest_passes_kubernetes_validate(sku, tmp_path: Path) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    m = build_mpijob(launcher_for_sku(sku, 2))
    for doc in _pod_templates(m):
        kv.validate(doc, "1.31.0", strict=True)  # raises on any schema error or unknown field
    # The CLI on the whole manifest: the CRD is reported as skipped (no schema), not failed.
    path = tmp_path / "mpijob.yaml"
    path.write_text(yaml.safe_dump_all([m, *_pod_templates(m)]))
    proc = subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout
    assert "WARN" in proc.stdout and "mpijob" in proc.stdout.lower()
    assert proc.stdout.count("passed") == 2


@pytest.mark.integration
def test_kubernetes_validate_catches_a_broken_template() -> None:
    kv = pytest.importorskip("kubernetes_validate")
    m = build_mpijob(launcher_for_sku("Standard_ND96isr_H100_v5", 2))
    bad = copy.deepcopy(m)
    bad["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "securityContext"
    ]["capabilities"]["add"] = "IPC_LOCK"
    with pytest.raises(kv.ValidationError):
        kv.validate(_pod_templates(bad)[1], "1.31.0", strict=True)


def test_a_run_short_of_the_workers_gpus_fails_naming_the_host(tmp_path, monkeypatch) -> None:
    """slotsPerWorker x workers ranks are expected: a launcher log where each worker ran 7 of
    its 8 GPUs passes the uneven-host check and must still fail."""
    from tests.validate.test_slurm import _short_log

    short = tmp_path / "short.txt"
    short.write_text(_short_log(lambda host, dev: dev == 7))
    client = RecordedClient("succeeded")
    client.rec["logs"] = {pod: str(short) for pod in client.rec["logs"]}
    monkeypatch.setattr(
        RecordedClient, "pod_log", lambda self, ns, pod: Path(self.rec["logs"][pod]).read_text()
    )
    outcome = validate_k8s(target(), Options(), client=client)
    assert outcome.status == "fail"
    text = " ".join(o.message for v in outcome.verdicts for o in v.findings)
    assert "ran 7 of 8 GPUs" in text, text


def test_the_wait_says_each_phase_once_with_the_seconds_since_the_start() -> None:
    """A CI log gets a plain line per change of the job's phase, not one per poll."""
    lines: list[str] = []
    client = RecordedClient("unschedulable")
    launcher = K8sLauncher(
        client, sleep=lambda _: None, clock=Clock(60), start_timeout_s=300, say=lines.append
    )
    with pytest.raises(CouldNotRun):
        launcher.run(build_mpijob(launcher_for_sku("Standard_ND96isr_H100_v5", 2)))
    assert len(lines) == 1 and "waiting for nodes (" in lines[0], lines
    assert "Insufficient nvidia.com/gpu" in lines[0] and lines[0].endswith(" s)"), lines
    polls = [c for c in client.calls if c[0] == "get"]
    assert len(polls) > 3  # many polls, one line

    lines.clear()
    client = RecordedClient("succeeded")
    K8sLauncher(client, sleep=lambda _: None, clock=Clock(10), say=lines.append).run(
        build_mpijob(target().launcher)
    )
    phases = [line.split(": ", 1)[1].rsplit(" (", 1)[0] for line in lines]
    assert phases[-2:] == ["running", "succeeded"], lines
    assert len(phases) == len(set(phases)), lines
    seconds = [int(line.rsplit("(", 1)[1].split(" ")[0]) for line in lines]
    assert seconds == sorted(seconds) and seconds[-1] > 0, lines
