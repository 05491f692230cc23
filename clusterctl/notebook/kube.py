"""A notebook on Kubernetes: a one-Pod Job in the team's Kueue queue (the LocalQueue the
validation jobs use), reached with `kubectl port-forward`. A batch/v1 Job rather than a bare Pod:
Kueue admits Jobs with its default integrations (plain Pods need its `pod` integration turned
on: kueue.sigs.k8s.io, "Run Plain Pods"), and activeDeadlineSeconds is the notebook's --time."""

from __future__ import annotations

import json
import secrets
import shlex
import subprocess
from collections.abc import Callable
from typing import Any

from clusterctl.errors import UserError
from clusterctl.notebook.request import NotebookRequest
from clusterctl.notebook.slurm import JOB_NAME, JobState, LabUrl
from clusterctl.spec.model import ClusterSpec

PORT = 8888
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
Runner = Callable[..., subprocess.CompletedProcess[str]]


def job_name() -> str:
    return f"{JOB_NAME}-{secrets.token_hex(3)}"


def pod_command(version: str) -> str:
    """JupyterLab at the pin in a venv on the Pod's scratch volume (gone with the Pod), on all
    the Pod's addresses: port-forward connects to the Pod's own network namespace."""
    venv = "/notebook/venv"
    pin = shlex.quote(f"jupyterlab=={version}")
    return (
        f"python3 -m venv --system-site-packages {venv} && "
        f"{venv}/bin/pip install -q --disable-pip-version-check {pin} && "
        f"exec {venv}/bin/jupyter-lab --no-browser --allow-root --ip=0.0.0.0 --port={PORT} "
        "--ServerApp.root_dir=/notebook"
    )


def queue_of(spec: ClusterSpec, stack: str) -> str:
    from clusterctl.spec.kubernetes import KUEUE_LOCAL_QUEUE

    if not spec.kubernetes.kueue:
        raise UserError(
            f"stack {stack}: kubernetes.kueue is off, so the cluster has no queue for a notebook; "
            "set kubernetes.kueue: true and run `clusterctl up`"
        )
    return KUEUE_LOCAL_QUEUE


def notebook_job(
    spec: ClusterSpec, request: NotebookRequest, *, name: str, queue: str, image: str, version: str
) -> dict[str, Any]:
    from clusterctl.spec.kubernetes import (
        VALIDATION_NAMESPACE,
        cluster_gpu_tolerations,
        node_labels,
    )

    part = next(p for p in spec.partitions if p.name == request.partition)
    limits: dict[str, Any] = dict(request.k8s_resources)
    container = {
        "name": "jupyterlab",
        "image": image,
        "command": ["/bin/bash", "-c", pod_command(version)],
        "ports": [{"containerPort": PORT, "name": "http"}],
        "resources": {"limits": limits, "requests": {"cpu": "1", "memory": "4Gi", **limits}},
        "volumeMounts": [{"name": "notebook", "mountPath": "/notebook"}],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": VALIDATION_NAMESPACE,
                     "labels": {QUEUE_LABEL: queue, "app.kubernetes.io/name": JOB_NAME}},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": request.minutes * 60,
            "ttlSecondsAfterFinished": 60,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": JOB_NAME}},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": node_labels(part),
                    "tolerations": cluster_gpu_tolerations(spec),
                    "containers": [container],
                    "volumes": [{"name": "notebook", "emptyDir": {}}],
                },
            },
        },
    }  # fmt: skip


class KubeNotebook:
    """The notebook's Job, seen through `kubectl --kubeconfig FILE`."""

    def __init__(
        self, kubeconfig: str, manifest: dict[str, Any], runner: Runner = subprocess.run
    ) -> None:
        self.kubeconfig = kubeconfig
        self.manifest = manifest
        self.job = str(manifest["metadata"]["name"])
        self.namespace = str(manifest["metadata"]["namespace"])
        self._run = runner
        self._pod = ""

    def kubectl(self, *args: str) -> list[str]:
        return ["kubectl", "--kubeconfig", self.kubeconfig, "--namespace", self.namespace, *args]

    def _call(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        argv = self.kubectl(*args)
        return self._run(argv, capture_output=True, text=True, input=input, timeout=60)

    def submit(self) -> str:
        proc = self._call("apply", "-f", "-", input=json.dumps(self.manifest))
        if proc.returncode != 0:
            raise UserError(f"kubectl apply of job {self.job} failed: {proc.stderr.strip()}")
        return self.job

    def state(self) -> JobState | None:
        proc = self._call("get", "pods", "-l", f"{JOB_NAME_LABEL}={self.job}", "-o", "json")
        pods = json.loads(proc.stdout or "{}").get("items", []) if proc.returncode == 0 else []
        if not pods:
            held = self._call("get", "job", self.job, "-o", "jsonpath={.spec.suspend}")
            if held.returncode != 0:
                return None
            return JobState("PENDING", "Kueue has not admitted it", "")
        pod = pods[0]
        self._pod = pod["metadata"]["name"]
        phase = pod.get("status", {}).get("phase", "Pending")
        if phase in ("Succeeded", "Failed"):
            return None
        conds = [c.get("reason", "") for c in pod.get("status", {}).get("conditions", [])]
        reason = next((c for c in conds if c), "scheduling")
        return JobState(phase.upper(), reason, pod.get("spec", {}).get("nodeName", ""))

    def log(self) -> str:
        return self._call("logs", f"job/{self.job}").stdout if self._pod else ""

    def tunnel_argv(self, url: LabUrl, local_port: int) -> list[str]:
        return self.kubectl("port-forward", f"pod/{self._pod}", f"{local_port}:{url.port}")

    def cancel(self) -> None:
        self._call("delete", "job", self.job, "--cascade=foreground", "--wait=false")

    def remove_log(self) -> None:
        """A Pod's log goes with the Pod."""
