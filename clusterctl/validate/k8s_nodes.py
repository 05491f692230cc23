"""Take suspect Kubernetes nodes out of service, and return them: `--drain` and `--resume` on a
Kubernetes cluster, with the same ownership rules as the Slurm drain (clusterctl.validate.drain).

A node validate takes out is cordoned (spec.unschedulable), tainted SUSPECT_TAINT (NoSchedule)
and annotated REASON_ANNOTATION with the reason ("gpucl-nccl: busbw ..."). The annotation is the
owner's mark: a node cordoned without it is someone else's (an admin, an upgrade's drain) and is
left as it is, and `--resume` touches only nodes that carry it. Every write carries the
resourceVersion read just before it, so the API server refuses (409) to write over a change made
in between. Running pods are not evicted: a job on a bad node is its owner's to stop.

`--resume`: the cordon comes off but the taint stays, so only the recheck's pair job (which
tolerates it) can land there; it passes: taint and annotation go; it fails: cordoned again with
the new reason.

While a node is out, it also carries SCALE_DOWN_DISABLED=true, so the cluster autoscaler keeps it
(an empty cordoned node is otherwise removed after its idle time, and `--resume` finds nothing to
recheck); `--resume` lifts it with the reason (docs/decisions/0007).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from clusterctl.spec.kubernetes import NODE_REASON_ANNOTATION
from clusterctl.validate import CouldNotRun
from clusterctl.validate.drain import validation_prefix
from clusterctl.validate.recheck import Recheck
from clusterctl.validate.sweep import output_figure

SUSPECT_TAINT = {"key": "gpu-clusters/nccl-suspect", "value": "validate", "effect": "NoSchedule"}
REASON_ANNOTATION = NODE_REASON_ANNOTATION
HOSTNAME_LABEL = "kubernetes.io/hostname"
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
"""The node annotation the cluster autoscaler never scales down (kubernetes/autoscaler
cluster-autoscaler FAQ, "How can I prevent Cluster Autoscaler from scaling down a particular
node?"); AKS's managed autoscaler honours it too."""


def _meta(node: dict[str, Any]) -> dict[str, Any]:
    return node.get("metadata", {})


def reason_of(node: dict[str, Any]) -> str | None:
    return (_meta(node).get("annotations") or {}).get(REASON_ANNOTATION)


def cordoned(node: dict[str, Any]) -> bool:
    return bool(node.get("spec", {}).get("unschedulable"))


def ready(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions", []) or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _taints_without_ours(node: dict[str, Any]) -> list[dict[str, Any]]:
    taints = node.get("spec", {}).get("taints") or []
    return [t for t in taints if t.get("key") != SUSPECT_TAINT["key"]]


def _patch(node: dict[str, Any], spec: dict[str, Any], reason: str | None) -> dict[str, Any]:
    """A merge patch that fails if the node changed since it was read; reason None removes it,
    and with it the autoscaler's scale-down hold, which goes on and off with the reason."""
    meta = {
        "resourceVersion": _meta(node)["resourceVersion"],
        "annotations": {REASON_ANNOTATION: reason, SCALE_DOWN_DISABLED: "true" if reason else None},
    }
    return {"metadata": meta, "spec": spec}


def cordon_nodes(client: Any, reasons: dict[str, str]) -> tuple[list[str], list[str]]:
    """Cordon, taint and annotate each node; (taken out, notes on the nodes left alone)."""
    taken, notes = [], []
    for name, reason in sorted(reasons.items()):
        node = client.get_node(name)
        if reason_of(node):
            notes.append(f"{name}: already taken out by validate ({reason_of(node)})")
            continue
        if cordoned(node):
            notes.append(f"{name}: cordoned by someone else, left as it is")
            continue
        taints = [*_taints_without_ours(node), dict(SUSPECT_TAINT)]
        client.patch_node(name, _patch(node, {"unschedulable": True, "taints": taints}, reason))
        taken.append(name)
    return taken, notes


def gpu_nodes(client: Any, launcher: dict[str, Any]) -> list[dict[str, Any]]:
    """The node group's nodes (the launcher's nodeSelector), by name."""
    selector = ",".join(f"{k}={v}" for k, v in sorted(launcher.get("nodeSelector", {}).items()))
    return sorted(client.list_nodes(selector), key=lambda n: _meta(n)["name"])


def in_service(nodes: Sequence[dict[str, Any]]) -> list[str]:
    """Ready nodes nobody has taken out: what a sweep measures and a recheck pairs with."""
    return [_meta(n)["name"] for n in nodes if ready(n) and not cordoned(n) and not reason_of(n)]


def pair_mpijob(
    manifest: dict[str, Any], pair: tuple[str, str], index: int, *, tolerate: bool = False
) -> dict[str, Any]:
    """The 2-worker MPIJob `manifest` pinned to the two nodes of `pair` (one worker each: a
    worker asks for every GPU of its node)."""
    m = copy.deepcopy(manifest)
    m["metadata"]["name"] = f"{m['metadata']['name']}-pair-{index}"
    worker = m["spec"]["mpiReplicaSpecs"]["Worker"]
    worker["replicas"] = 2
    pod = worker["template"]["spec"]
    term = {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In", "values": list(pair)}]}
    pod["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [term]}}
    }  # fmt: skip
    if tolerate:
        pod["tolerations"] = [
            *(pod.get("tolerations") or []),
            {**SUSPECT_TAINT, "operator": "Equal"},
        ]
    return m


def recheck_k8s_nodes(
    client: Any,
    run_pair: Callable[[dict[str, Any]], str],
    manifest: dict[str, Any],
    launcher: dict[str, Any],
    names: Sequence[str],
    *,
    health_prefix: str,
    floor_gbps: float,
    gate_bytes: int,
    say: Callable[[str], None] = lambda _: None,
) -> list[Recheck]:
    """`--resume NODE...` on Kubernetes: pair-test each node validate took out with a node in
    service; back in service, or cordoned again."""
    prefix = validation_prefix(health_prefix)
    nodes = {_meta(n)["name"]: n for n in gpu_nodes(client, launcher)}
    problems = [
        f"--resume {n}: not taken out by validate (annotation {REASON_ANNOTATION} "
        f"{reason_of(nodes[n])!r}); only nodes it cordoned are returned here"
        if n in nodes
        else f"--resume {n}: no such node in the node group"
        for n in names
        if n not in nodes or not (reason_of(nodes[n]) or "").startswith(prefix)
    ]
    if problems:
        raise CouldNotRun("; ".join(problems))
    partners = in_service(list(nodes.values()))
    if not partners:
        raise CouldNotRun(f"no node in service to test {', '.join(names)} with")
    results = []
    for i, name in enumerate(names):
        node = client.get_node(name)
        taints = [*_taints_without_ours(node), dict(SUSPECT_TAINT)]
        node = client.patch_node(
            name, _patch(node, {"unschedulable": False, "taints": taints}, reason_of(node))
        )
        figure = 0.0
        try:
            log = run_pair(pair_mpijob(manifest, (name, partners[0]), i, tolerate=True))
            figure = output_figure(log, gate_bytes) if log.strip() else 0.0
        finally:
            result = Recheck(name, partners[0], figure, floor_gbps)
            node = client.get_node(name)
            if result.passed:
                spec = {"unschedulable": False, "taints": _taints_without_ours(node)}
                client.patch_node(name, _patch(node, spec, None))
            else:
                reason = (
                    f"{prefix} recheck: busbw {figure:.3g} GB/s < {floor_gbps:.3g} "
                    f"with {partners[0]}"
                )
                again = [*_taints_without_ours(node), dict(SUSPECT_TAINT)]
                client.patch_node(
                    name, _patch(node, {"unschedulable": True, "taints": again}, reason)
                )
        say(result.line())
        results.append(result)
    return results
