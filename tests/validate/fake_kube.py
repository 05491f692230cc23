"""A stand-in for a kube-apiserver with the MPI operator, a scheduler and kubelets, at the level
clusterctl talks to it (clusterctl.validate.k8s_launcher.KubeClient): real object shapes (Node,
MPIJob, Pod, Event), JSON merge patches applied as RFC 7386 says, a write carrying an old
metadata.resourceVersion refused with the API server's 409 message, and every request recorded
as (verb, path, body). Pods land only on nodes that are schedulable for them (cordon, taints,
tolerations, node affinity); a pair's all-reduce runs at `slow_gbps` when a slow node is in it.
`launcher_log(job, hosts)`, when given, writes every launcher's log instead (a training job).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from clusterctl.validate import CouldNotRun
from tests.validate.conftest import DATA
from tests.validate.test_sweep_drain import pair_output

FULL_RUN_LOG = DATA / "nccl_tests_issue309_h100_2node.txt"


def node(name: str, labels: dict[str, str], *, cordoned: bool = False, ready: bool = True):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "resourceVersion": "100",
            "labels": {**labels, "kubernetes.io/hostname": name},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {
            "providerID": f"azure:///subscriptions/0/virtualMachineScaleSets/gpu/{name}",
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            **({"unschedulable": True} if cordoned else {}),
        },
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _tolerated(taint: dict, tolerations: list[dict]) -> bool:
    return any(
        t.get("key") == taint["key"]
        and t.get("effect", taint["effect"]) == taint["effect"]
        and (t.get("operator") == "Exists" or t.get("value") == taint.get("value"))
        for t in tolerations
    )


class FakeKubeApi:
    def __init__(
        self,
        nodes: list[dict],
        *,
        healthy_gbps: float = 0.0,
        slow: set[str] = frozenset(),
        launcher_log: Callable[[str, list[str]], str] | None = None,
    ):
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.healthy, self.slow = healthy_gbps, set(slow)
        self.launcher_log = launcher_log
        self.requests: list[tuple[str, str, Any]] = []
        self.applied: list[dict] = []
        self.jobs: dict[str, dict] = {}
        self.placed: dict[str, list[str]] = {}

    # -- nodes -----------------------------------------------------------------------------
    def get_node(self, name: str) -> dict:
        self.requests.append(("GET", f"/api/v1/nodes/{name}", None))
        if name not in self.nodes:
            raise CouldNotRun(
                f'kubectl get failed: Error from server (NotFound): nodes "{name}" not found'
            )
        return copy.deepcopy(self.nodes[name])

    def list_nodes(self, selector: str) -> list[dict]:
        self.requests.append(("GET", f"/api/v1/nodes?labelSelector={selector}", None))
        want = dict(kv.split("=", 1) for kv in selector.split(",") if kv)
        return [
            copy.deepcopy(n)
            for n in self.nodes.values()
            if all(n["metadata"]["labels"].get(k) == v for k, v in want.items())
        ]

    def patch_node(self, name: str, patch: dict) -> dict:
        self.requests.append(("PATCH", f"/api/v1/nodes/{name}", copy.deepcopy(patch)))
        current = self.nodes[name]
        sent = patch.get("metadata", {}).get("resourceVersion")
        if sent is not None and sent != current["metadata"]["resourceVersion"]:
            raise CouldNotRun(
                f"kubectl patch failed: Error from server (Conflict): Operation cannot be "
                f'fulfilled on nodes "{name}": the object has been modified; please apply your '
                "changes to the latest version and try again"
            )
        updated = merge_patch(current, patch)
        updated["metadata"]["resourceVersion"] = str(
            int(current["metadata"]["resourceVersion"]) + 1
        )
        self.nodes[name] = updated
        return copy.deepcopy(updated)

    def touch(self, name: str, **spec: Any) -> None:
        """Someone else changes the node (a new resourceVersion)."""
        n = self.nodes[name]
        n["spec"].update(spec)
        n["metadata"]["resourceVersion"] = str(int(n["metadata"]["resourceVersion"]) + 1)

    # -- MPIJobs -----------------------------------------------------------------------------
    def apply(self, docs: list[dict]) -> None:
        self.requests.append(("APPLY", "/", [d["kind"] for d in docs]))
        self.applied += copy.deepcopy(docs)

    def _fits(self, n: dict, pod: dict) -> bool:
        if n["spec"].get("unschedulable"):
            return False
        tolerations = pod.get("tolerations") or []
        if not all(_tolerated(t, tolerations) for t in n["spec"].get("taints") or []):
            return False
        labels = n["metadata"]["labels"]
        if any(labels.get(k) != v for k, v in (pod.get("nodeSelector") or {}).items()):
            return False
        terms = (pod.get("affinity") or {}).get("nodeAffinity", {})
        terms = terms.get("requiredDuringSchedulingIgnoredDuringExecution", {})
        for term in terms.get("nodeSelectorTerms", []):
            for e in term["matchExpressions"]:
                if e["operator"] == "In" and labels.get(e["key"]) not in e["values"]:
                    return False
        return True

    def create_mpijob(self, namespace: str, manifest: dict) -> dict:
        name = manifest["metadata"]["name"]
        self.requests.append(
            ("POST", f"/apis/kubeflow.org/v2beta1/namespaces/{namespace}/mpijobs", name)
        )
        worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]
        pod = worker["template"]["spec"]
        fits = [n for n, obj in sorted(self.nodes.items()) if self._fits(obj, pod)]
        self.placed[name] = fits[: worker["replicas"]] if len(fits) >= worker["replicas"] else []
        self.jobs[name] = copy.deepcopy(manifest)
        return copy.deepcopy(manifest)

    def get_mpijob(self, namespace: str, name: str) -> dict:
        self.requests.append(
            ("GET", f"/apis/kubeflow.org/v2beta1/namespaces/{namespace}/mpijobs/{name}", None)
        )
        job = copy.deepcopy(self.jobs[name])
        conditions = [{"type": "Created", "status": "True", "reason": "MPIJobCreated"}]
        if self.placed[name]:
            conditions.append({"type": "Succeeded", "status": "True", "reason": "MPIJobSucceeded"})
        job["status"] = {"conditions": conditions}
        return job

    def list_pods(self, namespace: str, selector: str) -> list[dict]:
        self.requests.append(
            ("GET", f"/api/v1/namespaces/{namespace}/pods?labelSelector={selector}", None)
        )
        labels = dict(kv.split("=", 1) for kv in selector.split(","))
        job, role = (
            labels["training.kubeflow.org/job-name"],
            labels["training.kubeflow.org/job-role"],
        )
        if role == "launcher":
            meta = {"name": f"{job}-launcher", "creationTimestamp": "2026-11-25T06:00:00Z"}
            return [{"metadata": meta, "status": {"phase": "Succeeded"}}]
        if self.placed[job]:
            return []
        message = f"0/{len(self.nodes)} nodes are available: node(s) were unschedulable"
        return [{"metadata": {"name": f"{job}-worker-0"}, "spec": {},
                 "status": {"phase": "Pending", "conditions": [
                     {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                      "message": message}]}}]  # fmt: skip

    def pod_log(self, namespace: str, pod: str) -> str:
        self.requests.append(("GET", f"/api/v1/namespaces/{namespace}/pods/{pod}/log", None))
        job = pod.removesuffix("-launcher")
        hosts = self.placed[job]
        if self.launcher_log is not None:
            return self.launcher_log(job, hosts)
        if "-pair-" not in job:
            return FULL_RUN_LOG.read_text()
        gbps = self.healthy * (0.1 if self.slow & set(hosts) else 1.0)
        return pair_output(tuple(hosts), gbps)

    def pod_events(self, namespace: str, pod: str) -> list[dict]:
        return []

    def delete_mpijob(self, namespace: str, name: str) -> None:
        path = f"/apis/kubeflow.org/v2beta1/namespaces/{namespace}/mpijobs/{name}"
        self.requests.append(("DELETE", path, None))
