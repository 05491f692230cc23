"""Run all_reduce_perf on Kubernetes as an MPIJob (kubeflow.org/v2beta1, the MPI operator):
create, wait, read the launcher's log, delete. The API is reached through `KubeClient`; the
real one shells out to `kubectl`, tests replay recorded API responses."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from clusterctl.constants import NCCL_MAX_BYTES, NCCL_MIN_BYTES
from clusterctl.validate import CouldNotRun

LAUNCHER_SELECTOR = "training.kubeflow.org/job-name={name},training.kubeflow.org/job-role=launcher"
WORKER_SELECTOR = "training.kubeflow.org/job-name={name},training.kubeflow.org/job-role=worker"


class KubeClient(Protocol):
    def apply(self, docs: list[dict[str, Any]]) -> None: ...
    def create_mpijob(self, namespace: str, manifest: dict[str, Any]) -> dict[str, Any]: ...
    def get_mpijob(self, namespace: str, name: str) -> dict[str, Any]: ...
    def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]: ...
    def pod_log(self, namespace: str, pod: str) -> str: ...
    def delete_mpijob(self, namespace: str, name: str) -> None: ...


def build_mpijob(
    launcher: dict[str, Any],
    *,
    name: str = "clusterctl-nccl",
    min_bytes: str = NCCL_MIN_BYTES,
    max_bytes: str = NCCL_MAX_BYTES,
    deadline_s: int = 1800,
) -> dict[str, Any]:
    """The MPIJob for the `ncclLauncher` stack output (clusterctl.outputs.NcclLauncher): the same
    template and function `plan --out` writes its validation MPIJob with."""
    from clusterctl.render.kubernetes import mpijob_manifest

    text = mpijob_manifest(
        launcher,  # type: ignore[arg-type]
        name=name,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        deadline_s=deadline_s,
    )
    return yaml.safe_load(text)


def prerequisites(launcher: dict[str, Any]) -> list[dict[str, Any]]:
    """The namespace (and topology ConfigMap) the MPIJob needs, applied before it is created."""
    from clusterctl.render.kubernetes import mpijob_prerequisites

    return mpijob_prerequisites(launcher)  # type: ignore[arg-type]


def _condition(job: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for c in job.get("status", {}).get("conditions", []) or []:
        if c.get("type") == kind and c.get("status") == "True":
            return c
    return None


def _pending_reason(pods: list[dict[str, Any]]) -> str | None:
    for pod in pods:
        status = pod.get("status", {})
        if status.get("phase") != "Pending":
            continue
        for c in status.get("conditions", []) or []:
            if c.get("reason") == "Unschedulable":
                return f"pod {pod['metadata']['name']} unschedulable: {c.get('message', '')}"
        for cs in status.get("containerStatuses", []) or []:
            waiting = cs.get("state", {}).get("waiting")
            if waiting and waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff"):
                name = pod["metadata"]["name"]
                return f"pod {name}: {waiting['reason']}: {waiting.get('message', '')}"
    return None


@dataclass
class K8sLauncher:
    client: KubeClient
    poll_s: float = 5.0
    start_timeout_s: float = 600.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    say: Callable[[str], None] = field(default=lambda m: print(m, file=sys.stderr))

    def run(
        self,
        manifest: dict[str, Any],
        *,
        timeout_s: float = 1800.0,
        needs: list[dict[str, Any]] | None = None,
    ) -> str:
        """Apply what the MPIJob needs (`needs`: its namespace, ...), create the MPIJob, wait for
        it, return the launcher's log; always delete the MPIJob."""
        ns, name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
        try:
            if needs:
                self.client.apply(needs)
            self.client.create_mpijob(ns, manifest)
        except CouldNotRun:
            raise
        except Exception as exc:
            raise CouldNotRun(f"could not create MPIJob {ns}/{name}: {exc}") from exc
        interrupted = False
        try:
            failed = self._wait(ns, name, timeout_s)
            log = self._launcher_log(ns, name)
            if failed and not log.strip():
                raise CouldNotRun(f"MPIJob {ns}/{name} failed: {failed}")
            return log
        except KeyboardInterrupt:  # Ctrl-C: the cluster must not keep running our job
            interrupted = True
            raise
        finally:
            with contextlib.suppress(Exception):  # cleanup must not hide the real outcome
                self.client.delete_mpijob(ns, name)
                if interrupted:
                    self.say(f"interrupted: deleted MPIJob {ns}/{name}")

    def _wait(self, ns: str, name: str, timeout_s: float) -> str | None:
        """None when the job succeeded, the failure message when it failed."""
        start = self.clock()
        while True:
            job = self.client.get_mpijob(ns, name)
            if _condition(job, "Succeeded"):
                return None
            if c := _condition(job, "Failed"):
                return f"{c.get('reason', '')}: {c.get('message', '')}".strip(": ")
            waited = self.clock() - start
            if not _condition(job, "Running") and waited > self.start_timeout_s:
                pods = self.client.list_pods(ns, WORKER_SELECTOR.format(name=name))
                why = _pending_reason(pods) or "workers not running"
                raise CouldNotRun(f"MPIJob {ns}/{name} did not start in {waited:.0f} s: {why}")
            if waited > timeout_s:
                raise CouldNotRun(f"MPIJob {ns}/{name} did not finish in {timeout_s:.0f} s")
            self.sleep(self.poll_s)

    def _launcher_log(self, ns: str, name: str) -> str:
        pods = self.client.list_pods(ns, LAUNCHER_SELECTOR.format(name=name))
        if not pods:
            raise CouldNotRun(f"MPIJob {ns}/{name}: no launcher pod to read the result from")
        latest = max(pods, key=lambda p: p["metadata"].get("creationTimestamp", ""))
        return self.client.pod_log(ns, latest["metadata"]["name"])


class KubectlClient:
    """The real client: `kubectl` with the user's kubeconfig (no kube-apiserver runs here)."""

    def __init__(self, kubeconfig: str) -> None:
        # Always an explicit file: never the ambient KUBECONFIG / ~/.kube/config context.
        if not kubeconfig:
            raise CouldNotRun("no kubeconfig file to reach the cluster with")
        self.base = ["kubectl", "--kubeconfig", kubeconfig]

    def _run(self, args: list[str], stdin: str | None = None) -> str:
        try:
            proc = subprocess.run(
                self.base + args, input=stdin, capture_output=True, text=True, timeout=120
            )
        except FileNotFoundError:
            raise CouldNotRun(
                "no `kubectl` on PATH: install it to validate a Kubernetes cluster"
            ) from None
        if proc.returncode != 0:
            msg = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise CouldNotRun(f"kubectl {args[0]} failed: {msg}")
        return proc.stdout

    def apply(self, docs: list[dict[str, Any]]) -> None:
        doc = {"apiVersion": "v1", "kind": "List", "items": docs}
        self._run(["apply", "-f", "-"], json.dumps(doc))

    def create_mpijob(self, namespace: str, manifest: dict[str, Any]) -> dict[str, Any]:
        return json.loads(self._run(["create", "-o", "json", "-f", "-"], json.dumps(manifest)))

    def get_mpijob(self, namespace: str, name: str) -> dict[str, Any]:
        return json.loads(self._run(["-n", namespace, "get", "mpijob", name, "-o", "json"]))

    def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        out = self._run(["-n", namespace, "get", "pods", "-l", selector, "-o", "json"])
        return json.loads(out).get("items", [])

    def pod_log(self, namespace: str, pod: str) -> str:
        return self._run(["-n", namespace, "logs", pod])

    def delete_mpijob(self, namespace: str, name: str) -> None:
        self._run(["-n", namespace, "delete", "mpijob", name, "--ignore-not-found", "--wait=false"])
