"""Run all_reduce_perf on Kubernetes as an MPIJob (kubeflow.org/v2beta1, the MPI operator):
create, wait, read the launcher's log, delete. The API is reached through `KubeClient`; the
real one shells out to `kubectl`, tests replay recorded API responses.

Starting has phases, each with its own window, so a slow start is told from a stuck one: a job
Kueue has not admitted waits as long as the run may take; a pod waiting for a node the
autoscaler adds gets NODE_PROVISION_S; a pod pulling its image gets the time the image takes at
PULL_FLOOR_BYTES_S (workers, then the launcher, each from when its own pull began). Only when a
phase outlives its window is the job reported as not started, saying which phase and pod."""

from __future__ import annotations

import contextlib
import functools
import json
import re
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
NODE_PROVISION_S = 25 * 60
"""How long a GPU node may take to join when the autoscaler adds one (clusterctl.spec.kubernetes
NODE_PROVISION_MINUTES, the autoscalers' max-node-provision-time)."""
DEFAULT_IMAGE_BYTES = 10 << 30
"""An image of unknown size is taken as 10 GiB (the stock nccl-tests images are about 8.6 GB)."""
PULL_FLOOR_BYTES_S = 20e6
"""The slowest pull rate still called progress: 10 GiB in about 9 minutes."""
PULL_WAITING = ("ContainerCreating", "ErrImagePull", "ImagePullBackOff")


class KubeClient(Protocol):
    def apply(self, docs: list[dict[str, Any]]) -> None: ...
    def create_mpijob(self, namespace: str, manifest: dict[str, Any]) -> dict[str, Any]: ...
    def get_mpijob(self, namespace: str, name: str) -> dict[str, Any]: ...
    def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]: ...
    def pod_log(self, namespace: str, pod: str) -> str: ...
    def delete_mpijob(self, namespace: str, name: str) -> None: ...
    def pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]: ...
    def list_nodes(self, selector: str) -> list[dict[str, Any]]: ...
    def get_node(self, name: str) -> dict[str, Any]: ...
    def patch_node(self, name: str, patch: dict[str, Any]) -> dict[str, Any]: ...


def build_mpijob(
    launcher: dict[str, Any],
    *,
    name: str = "clusterctl-nccl",
    min_bytes: str = NCCL_MIN_BYTES,
    max_bytes: str = NCCL_MAX_BYTES,
    deadline_s: int = 1800,
    algorithm: str = "Ring",
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
        algorithm=algorithm,
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


def _unschedulable(pods: list[dict[str, Any]]) -> str | None:
    for pod in pods:
        for c in pod.get("status", {}).get("conditions", []) or []:
            if c.get("reason") == "Unschedulable":
                return f"pod {pod['metadata']['name']} unschedulable: {c.get('message', '')}"
    return None


def _waiting_pull(pod: dict[str, Any]) -> tuple[str, str, str] | None:
    """(image, reason, message) of a container that waits for its image, else None."""
    for cs in pod.get("status", {}).get("containerStatuses", []) or []:
        waiting = cs.get("state", {}).get("waiting") or {}
        if waiting.get("reason") in PULL_WAITING:
            return cs.get("image", ""), waiting["reason"], waiting.get("message", "")
    if pod.get("spec", {}).get("nodeName") and not pod.get("status", {}).get("containerStatuses"):
        image = (pod.get("spec", {}).get("containers") or [{}])[0].get("image", "")
        return image, "ContainerCreating", ""
    return None


@dataclass
class K8sLauncher:
    client: KubeClient
    poll_s: float = 5.0
    start_timeout_s: float = 600.0
    """The window of a start with nothing to wait for (no queue, node or image pull)."""
    image_bytes: int = DEFAULT_IMAGE_BYTES
    provision_s: float = NODE_PROVISION_S
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    say: Callable[[str], None] = field(default=lambda m: print(m, file=sys.stderr))

    @property
    def pull_s(self) -> float:
        return self.start_timeout_s + self.image_bytes / PULL_FLOOR_BYTES_S

    def run(
        self,
        manifest: dict[str, Any],
        *,
        timeout_s: float = 1800.0,
        needs: list[dict[str, Any]] | None = None,
    ) -> str:
        """Apply what the MPIJob needs (`needs`: its namespace, ...), create the MPIJob, wait for
        it, return the launcher's log; always delete the MPIJob."""
        return self.run_many([manifest], timeout_s=timeout_s, needs=needs)[0]

    def run_many(
        self,
        manifests: list[dict[str, Any]],
        *,
        timeout_s: float = 1800.0,
        needs: list[dict[str, Any]] | None = None,
    ) -> list[str]:
        """Create all the MPIJobs (they run side by side), wait for each, return their launcher
        logs in order; always delete every one created."""
        created: list[tuple[str, str]] = []
        interrupted = False
        try:
            if needs:
                self._guard(lambda: self.client.apply(needs), "apply what the MPIJob needs")
            for manifest in manifests:
                ns, name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
                self._guard(
                    functools.partial(self.client.create_mpijob, ns, manifest),
                    f"create MPIJob {ns}/{name}",
                )
                created.append((ns, name))
            logs = []
            for ns, name in created:
                failed = self._wait(ns, name, timeout_s)
                log = self._launcher_log(ns, name)
                if failed and not log.strip():
                    raise CouldNotRun(f"MPIJob {ns}/{name} failed: {failed}")
                logs.append(log)
            return logs
        except KeyboardInterrupt:  # Ctrl-C: the cluster must not keep running our jobs
            interrupted = True
            raise
        finally:
            for ns, name in created:
                with contextlib.suppress(Exception):  # cleanup must not hide the real outcome
                    self.client.delete_mpijob(ns, name)
                    if interrupted:
                        self.say(f"interrupted: deleted MPIJob {ns}/{name}")

    @staticmethod
    def _guard(call: Callable[[], Any], what: str) -> None:
        try:
            call()
        except CouldNotRun:
            raise
        except Exception as exc:
            raise CouldNotRun(f"could not {what}: {exc}") from exc

    def _wait(self, ns: str, name: str, timeout_s: float) -> str | None:
        """None when the job succeeded, the failure message when it failed. timeout_s counts
        from the job's start (or, while Kueue holds it, from its creation)."""
        start = self.clock()
        running_since: float | None = None
        pulling_since: dict[str, float] = {}
        phase = ""

        def tell(now_phase: str, at: float) -> None:
            nonlocal phase
            if now_phase != phase:  # a line per change: plain in a CI log, no live line needed
                phase = now_phase
                self.say(f"MPIJob {ns}/{name}: {phase} ({at - start:.0f} s)")

        while True:
            job = self.client.get_mpijob(ns, name)
            if _condition(job, "Succeeded"):
                tell("succeeded", self.clock())
                return None
            if c := _condition(job, "Failed"):
                tell("failed", self.clock())
                return f"{c.get('reason', '')}: {c.get('message', '')}".strip(": ")
            now = self.clock()
            if _condition(job, "Running"):
                tell("running", now)
                running_since = running_since or now
                if now - running_since > timeout_s:
                    raise CouldNotRun(f"MPIJob {ns}/{name} did not finish in {timeout_s:.0f} s")
            else:
                tell(
                    self._check_start(ns, name, job, now - start, timeout_s, pulling_since, now),
                    now,
                )
            self.sleep(self.poll_s)

    def _check_start(
        self,
        ns: str,
        name: str,
        job: dict[str, Any],
        waited: float,
        timeout_s: float,
        pulling_since: dict[str, float],
        now: float,
    ) -> str:
        """Raise CouldNotRun once the phase the job is in has outlived its window; else say
        which phase that is."""
        what = f"MPIJob {ns}/{name} did not start in {waited:.0f} s"
        if (job.get("spec", {}).get("runPolicy") or {}).get("suspend"):
            if waited > timeout_s:
                raise CouldNotRun(f"{what}: still queued, Kueue has not admitted it")
            return "queued (Kueue has not admitted it yet)"
        pods = [
            *self.client.list_pods(ns, WORKER_SELECTOR.format(name=name)),
            *self.client.list_pods(ns, LAUNCHER_SELECTOR.format(name=name)),
        ]
        pulls = {p["metadata"]["name"]: (p, w) for p in pods if (w := _waiting_pull(p))}
        for pod_name in list(pulling_since):
            if pod_name not in pulls:
                del pulling_since[pod_name]
        for pod_name, (pod, (image, reason, message)) in pulls.items():
            since = pulling_since.setdefault(pod_name, now)
            if now - since > self.pull_s:
                node = pod.get("spec", {}).get("nodeName", "?")
                last = self._last_event(ns, pod_name)
                raise CouldNotRun(
                    f"{what}: the image pull of {image} on pod {pod_name} (node {node}) did not "
                    f"finish in {now - since:.0f} s ({reason}"
                    + (f": {message or last}" if message or last else "")
                    + f"; {self.image_bytes / 1e9:.1f} GB at {PULL_FLOOR_BYTES_S / 1e6:.0f} MB/s "
                    f"would take {self.image_bytes / PULL_FLOOR_BYTES_S:.0f} s)"
                )
        if pulls:
            images = sorted({image for _, (image, _, _) in pulls.values()})
            return f"pulling {', '.join(images)} on {len(pulls)} pod(s)"
        why = _unschedulable(pods)
        if why and waited > self.start_timeout_s + self.provision_s:
            raise CouldNotRun(f"{what}: {why}")
        if not why and waited > self.start_timeout_s:
            raise CouldNotRun(f"{what}: workers not running")
        return f"waiting for nodes ({why})" if why else "starting pods"

    def _last_event(self, ns: str, pod: str) -> str:
        with contextlib.suppress(Exception):
            events = self.client.pod_events(ns, pod)
            if events:
                return str(events[-1].get("message", ""))
        return ""

    def _launcher_log(self, ns: str, name: str) -> str:
        pods = self.client.list_pods(ns, LAUNCHER_SELECTOR.format(name=name))
        if not pods:
            raise CouldNotRun(f"MPIJob {ns}/{name}: no launcher pod to read the result from")
        latest = max(pods, key=lambda p: p["metadata"].get("creationTimestamp", ""))
        return self.client.pod_log(ns, latest["metadata"]["name"])


_UNREACHABLE = re.compile(
    r"(dial tcp [^\s;]*: [^;\n]*|Unable to connect to the server: [^;\n]*|no such host|"
    r"i/o timeout|connection refused)"
)


def kubectl_problem(verb: str, stderr: str) -> str:
    """kubectl's failure as one line. An API server that does not answer is said as such:
    kubectl itself then ends with advice (`turn validation off with --validate=false`) that
    would not help, as its schema download failed for the same reason."""
    text = stderr.strip()
    found = _UNREACHABLE.search(text)
    if found:
        return (
            f"the Kubernetes API server did not answer kubectl {verb} ({found.group(1).strip()}):"
            " check that the cluster is up and that your address is in ssh.allowedCidrs (the "
            "API server's authorized ranges)"
        )
    msg = (text.splitlines() or ["(no message)"])[-1]
    return f"kubectl {verb} failed: {msg}"


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
            raise CouldNotRun(kubectl_problem(args[0], proc.stderr))
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

    def pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        selector = f"involvedObject.kind=Pod,involvedObject.name={pod}"
        out = self._run(
            ["-n", namespace, "get", "events", "--field-selector", selector,
             "--sort-by", ".lastTimestamp", "-o", "json"]
        )  # fmt: skip
        return json.loads(out).get("items", [])

    def list_nodes(self, selector: str) -> list[dict[str, Any]]:
        return json.loads(self._run(["get", "nodes", "-l", selector, "-o", "json"])).get(
            "items", []
        )

    def get_node(self, name: str) -> dict[str, Any]:
        return json.loads(self._run(["get", "node", name, "-o", "json"]))

    def patch_node(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        # a merge patch carrying metadata.resourceVersion fails (409) if the node changed since
        args = ["patch", "node", name, "--type", "merge", "-p", json.dumps(patch), "-o", "json"]
        return json.loads(self._run(args))
