"""The NCCL namespace's guard rails as rendered: a default-deny NetworkPolicy set that lets the
MPIJobs do exactly what they need (checked by evaluating the policies the way the API defines
them), and the least Pod Security level the rendered pods pass."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from clusterctl.render.kubernetes import mpijob_prerequisites, render_k8s_bundle
from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import VALIDATION_NAMESPACE, nccl_launcher, pod_security_level
from clusterctl.spec.load import load_stack_spec

STACKS = ("aws-p5", "aks-h100")
NS = VALIDATION_NAMESPACE
# Pod Security Standards, Baseline, "Capabilities" (kubernetes.io/docs/concepts/security/
# pod-security-standards): what a container may add; written out here, not imported, so the
# check does not share the code's list.
PSS_BASELINE_ADD = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip


def _bundle(stack: str) -> dict[str, str]:
    spec, _ = load_stack_spec(stack, [])
    return render_k8s_bundle(spec, stack)


def _docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def _pods(bundle: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Every pod template of both MPIJobs: '<job>/<role>' -> template."""
    out = {}
    for rel in ("validation/nccl-tests-mpijob.yaml", "validation/train-mpijob.yaml"):
        (job,) = [d for d in _docs(bundle[rel]) if d["kind"] == "MPIJob"]
        for role, replica in job["spec"]["mpiReplicaSpecs"].items():
            out[f"{job['metadata']['name']}/{role}"] = replica["template"]
    assert len(out) == 4
    return out


# -- NetworkPolicy, evaluated as networking.k8s.io/v1 defines it: a pod selected by no policy of
# a direction is open in it; one selected by any is open only to what some rule allows.


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, "the evaluator knows matchLabels only"
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def _peer(peer: dict[str, Any], policy_ns: str, pod: dict[str, Any] | None) -> bool:
    if pod is None:  # outside the cluster: only an ipBlock matches
        return "ipBlock" in peer
    if "namespaceSelector" in peer:
        if not _selects(peer["namespaceSelector"], {"kubernetes.io/metadata.name": pod["ns"]}):
            return False
    elif pod["ns"] != policy_ns:
        return False
    return _selects(peer.get("podSelector", {}), pod["labels"])


def _open(policies, pod, direction, other, port, proto) -> bool:
    mine = [
        p for p in policies
        if p["metadata"]["namespace"] == pod["ns"]
        and direction in p["spec"]["policyTypes"]
        and _selects(p["spec"]["podSelector"], pod["labels"])
    ]  # fmt: skip
    if not mine:
        return True
    key, peers = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    for p in mine:
        for rule in p["spec"].get(key, []):
            ports = rule.get("ports")
            if ports and not any(
                x["port"] == port and x.get("protocol", "TCP") == proto for x in ports
            ):
                continue
            if peers not in rule or any(_peer(x, pod["ns"], other) for x in rule[peers]):
                return True
    return False


def _allowed(policies, src, dst, port, proto="TCP") -> bool:
    out_ok = src is None or _open(policies, src, "Egress", dst, port, proto)
    in_ok = dst is None or _open(policies, dst, "Ingress", src, port, proto)
    return out_ok and in_ok


@pytest.fixture(scope="module", params=STACKS)
def cluster(request):
    bundle = _bundle(request.param)
    policies = _docs(bundle["manifests/network-policy-nccl-tests.yaml"])
    pods = {k: {"ns": NS, "labels": t["metadata"]["labels"]} for k, t in _pods(bundle).items()}
    return policies, pods


def test_the_namespace_denies_by_default(cluster) -> None:
    policies, _ = cluster
    (deny,) = [p for p in policies if p["metadata"]["name"] == "default-deny"]
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    assert all(p["kind"] == "NetworkPolicy" and p["metadata"]["namespace"] == NS for p in policies)


def test_the_mpijobs_own_traffic_is_allowed(cluster) -> None:
    policies, pods = cluster
    launcher, worker = pods["nccl-tests/Launcher"], pods["nccl-tests/Worker"]
    assert _allowed(policies, launcher, worker, 22)  # mpirun's ssh to the workers' sshd
    assert _allowed(policies, worker, launcher, 41234)  # orted calling back to mpirun
    assert _allowed(policies, worker, worker, 50123)  # NCCL bootstrap and sockets
    train = pods["clusterctl-train/Worker"]
    assert _allowed(policies, train, train, 29500)  # torchrun's rendezvous
    dns = {"ns": "kube-system", "labels": {"k8s-app": "kube-dns"}}
    assert _allowed(policies, worker, dns, 53, "UDP") and _allowed(policies, worker, dns, 53)


def test_everything_else_is_denied(cluster) -> None:
    policies, pods = cluster
    worker = pods["nccl-tests/Worker"]
    outsider = {"ns": "default", "labels": {"app": "anything"}}
    assert not _allowed(policies, outsider, worker, 22)
    assert not _allowed(policies, worker, outsider, 8080)
    assert not _allowed(policies, worker, {"ns": "kube-system", "labels": {}}, 53, "UDP")
    assert not _allowed(policies, worker, None, 443)  # no internet
    assert not _allowed(policies, None, worker, 22)


def test_only_the_training_pods_reach_package_mirrors(cluster) -> None:
    policies, pods = cluster
    for role in ("Launcher", "Worker"):
        assert _allowed(policies, pods[f"clusterctl-train/{role}"], None, 443)
        assert _allowed(policies, pods[f"clusterctl-train/{role}"], None, 80)
        assert not _allowed(policies, pods[f"clusterctl-train/{role}"], None, 22)
        assert not _allowed(policies, pods[f"nccl-tests/{role}"], None, 443)


# -- Pod Security: the least level every rendered pod passes is the namespace's enforce label.


def _baseline_violations(template: dict[str, Any]) -> list[str]:
    spec = template["spec"]
    bad = [f for f in ("hostNetwork", "hostPID", "hostIPC") if spec.get(f)]
    bad += [v["name"] for v in spec.get("volumes", []) if "hostPath" in v]
    for c in spec["containers"]:
        sc = c.get("securityContext") or {}
        bad += ["privileged"] if sc.get("privileged") else []
        bad += [
            x for x in (sc.get("capabilities") or {}).get("add", []) if x not in PSS_BASELINE_ADD
        ]
        bad += [str(p) for p in c.get("ports", []) if p.get("hostPort")]
    return bad


@pytest.mark.parametrize("stack", STACKS)
def test_the_namespace_enforces_the_least_level_its_pods_pass(stack) -> None:
    bundle = _bundle(stack)
    pods = _pods(bundle)
    violations = {v for t in pods.values() for v in _baseline_violations(t)}
    # RDMA's memory registration: every EFA and InfiniBand worker adds IPC_LOCK
    assert violations == {"IPC_LOCK"}
    for t in pods.values():  # root, no seccomp profile: never `restricted`
        assert not (t["spec"].get("securityContext") or {}).get("runAsNonRoot")
    (ns,) = _docs(bundle["manifests/namespace-nccl-tests.yaml"])
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


def test_pods_that_add_only_baseline_capabilities_get_baseline() -> None:
    assert pod_security_level([]) == "baseline"
    assert pod_security_level(["NET_BIND_SERVICE"]) == "baseline"
    assert pod_security_level(["IPC_LOCK"]) == "privileged"


@pytest.mark.parametrize("stack", STACKS)
def test_validate_labels_the_namespace_it_applies_alike(stack) -> None:
    spec, _ = load_stack_spec(stack, [])
    docs = mpijob_prerequisites(nccl_launcher(spec, stack, catalog()))
    (ns,) = [d for d in docs if d["kind"] == "Namespace"]
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
