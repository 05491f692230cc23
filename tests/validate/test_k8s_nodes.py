"""`validate --kubeconfig ... --sweep/--drain/--resume` on Kubernetes, against a fake API server
(tests/validate/fake_kube.py: real object shapes, merge patches, 409 on a stale write): 2-node
pair MPIJobs find the bad node, --drain cordons and taints it with the reason in an annotation
and never touches a node someone else cordoned, --resume re-tests it and uncordons it or not; and
the start window: a pull that never finishes is reported as one, queueing and a node being added
are waited for."""

from __future__ import annotations

import pytest

from clusterctl.cli.validate import refuse_ignored
from clusterctl.validate import CouldNotRun
from clusterctl.validate.k8s_launcher import K8sLauncher, build_mpijob
from clusterctl.validate.k8s_nodes import (
    REASON_ANNOTATION,
    SCALE_DOWN_DISABLED,
    SUSPECT_TAINT,
    cordon_nodes,
)
from clusterctl.validate.run import Options, catalog_thresholds, recheck_k8s, validate_k8s
from clusterctl.validate.targets import KubeTarget, launcher_for_sku
from tests.validate.fake_kube import FakeKubeApi, node

SKU = "Standard_ND96isr_H100_v5"
NAMES = [f"aks-gpu-{i}" for i in range(4)]


def target() -> KubeTarget:
    return KubeTarget("/nonexistent/kubeconfig", launcher_for_sku(SKU, 2))


def labels() -> dict[str, str]:
    return dict(target().launcher["nodeSelector"])


def floor() -> float:
    return catalog_thresholds(SKU, 2, Options()).fail_below_gbps


def cluster(slow=frozenset(), **cordoned_by_others) -> FakeKubeApi:
    nodes = [node(n, labels(), cordoned=n in cordoned_by_others) for n in NAMES]
    return FakeKubeApi(nodes, healthy_gbps=2 * floor(), slow=set(slow))


def patches(api: FakeKubeApi) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for verb, path, body in api.requests:
        if verb == "PATCH":
            out.setdefault(path.rsplit("/", 1)[1], []).append(body)
    return out


def test_sweep_finds_the_bad_node_and_drain_cordons_taints_and_annotates_it() -> None:
    """Old code: --sweep on Kubernetes printed 'not implemented yet'; --drain was refused."""
    api = cluster(slow={"aks-gpu-2"})
    outcome = validate_k8s(target(), Options(sweep=True, drain=True), client=api)
    assert outcome.sweep is not None and outcome.sweep.localization.bad == {"aks-gpu-2"}
    assert outcome.status == "fail" and outcome.drained == ["aks-gpu-2"]
    (patch,) = patches(api)["aks-gpu-2"]
    assert patch["metadata"]["resourceVersion"] == "100"  # the version it read: no blind write
    assert patch["metadata"]["annotations"][REASON_ANNOTATION].startswith("gpucl-nccl: busbw ")
    bad = api.nodes["aks-gpu-2"]
    assert bad["spec"]["unschedulable"] is True
    assert SUSPECT_TAINT in bad["spec"]["taints"]
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in bad["spec"][
        "taints"
    ]  # the taints it had stay
    assert set(patches(api)) == {"aks-gpu-2"}  # nothing else written
    pair_jobs = [b for v, p, b in api.requests if v == "POST" and "-pair-" in b]
    deleted = [p.rsplit("/", 1)[1] for v, p, _ in api.requests if v == "DELETE"]
    assert pair_jobs and set(pair_jobs) <= set(deleted)  # every pair job is cleaned up


def test_a_node_someone_else_cordoned_is_left_alone() -> None:
    api = cluster(**{"aks-gpu-1": True})
    taken, notes = cordon_nodes(api, {"aks-gpu-1": "gpucl-nccl: busbw 1 GB/s < 300"})
    assert taken == [] and notes == ["aks-gpu-1: cordoned by someone else, left as it is"]
    assert not patches(api)
    assert REASON_ANNOTATION not in api.nodes["aks-gpu-1"]["metadata"]["annotations"]


def test_a_node_changed_between_read_and_write_is_not_overwritten() -> None:
    class Racing(FakeKubeApi):
        def get_node(self, name):
            got = super().get_node(name)
            self.touch(name, unschedulable=True)  # an admin cordons it right after our read
            return got

    api = Racing([node(n, labels()) for n in NAMES], healthy_gbps=1.0)
    with pytest.raises(CouldNotRun, match="the object has been modified"):
        cordon_nodes(api, {"aks-gpu-0": "gpucl-nccl: x"})
    assert REASON_ANNOTATION not in api.nodes["aks-gpu-0"]["metadata"]["annotations"]


def _taken_out(api: FakeKubeApi, name: str) -> None:
    cordon_nodes(api, {name: "gpucl-nccl: busbw 40 GB/s < 300 with aks-gpu-0 (bad)"})
    api.requests.clear()


def test_resume_retests_and_returns_a_healed_node() -> None:
    api = cluster()
    _taken_out(api, "aks-gpu-3")
    (result,) = recheck_k8s(target(), Options(), ["aks-gpu-3"], client=api)
    assert result.passed and result.partner == "aks-gpu-0"
    # the pair job could land only because the cordon came off while our taint kept others out
    (pair,) = [b for v, _, b in api.requests if v == "POST"]
    assert api.placed[pair] == ["aks-gpu-0", "aks-gpu-3"]
    lifted, returned = patches(api)["aks-gpu-3"]
    assert lifted["spec"]["unschedulable"] is False and SUSPECT_TAINT in lifted["spec"]["taints"]
    assert returned["metadata"]["annotations"] == {
        REASON_ANNOTATION: None,
        SCALE_DOWN_DISABLED: None,
    }
    healed = api.nodes["aks-gpu-3"]
    assert not healed["spec"]["unschedulable"] and SUSPECT_TAINT not in healed["spec"]["taints"]
    assert REASON_ANNOTATION not in healed["metadata"]["annotations"]


def test_resume_cordons_a_node_that_still_fails_again() -> None:
    api = cluster(slow={"aks-gpu-3"})
    _taken_out(api, "aks-gpu-3")
    (result,) = recheck_k8s(target(), Options(), ["aks-gpu-3"], client=api)
    assert not result.passed
    still = api.nodes["aks-gpu-3"]
    assert still["spec"]["unschedulable"] is True and SUSPECT_TAINT in still["spec"]["taints"]
    assert "recheck" in still["metadata"]["annotations"][REASON_ANNOTATION]


def test_a_suspect_node_is_kept_by_the_autoscaler_until_resume_returns_it() -> None:
    """Old code: cordoned and tainted only; the autoscaler removed the empty node after its idle
    time, leaving nothing for --resume to recheck."""
    api = cluster()
    _taken_out(api, "aks-gpu-3")
    assert api.nodes["aks-gpu-3"]["metadata"]["annotations"][SCALE_DOWN_DISABLED] == "true"
    recheck_k8s(target(), Options(), ["aks-gpu-3"], client=api)
    lifted, _ = patches(api)["aks-gpu-3"]
    assert lifted["metadata"]["annotations"][SCALE_DOWN_DISABLED] == "true"  # during the recheck
    assert SCALE_DOWN_DISABLED not in api.nodes["aks-gpu-3"]["metadata"]["annotations"]


def test_a_node_that_fails_its_recheck_stays_kept_from_scale_down() -> None:
    api = cluster(slow={"aks-gpu-3"})
    _taken_out(api, "aks-gpu-3")
    recheck_k8s(target(), Options(), ["aks-gpu-3"], client=api)
    assert api.nodes["aks-gpu-3"]["metadata"]["annotations"][SCALE_DOWN_DISABLED] == "true"


def test_resume_refuses_a_node_validate_did_not_take_out() -> None:
    api = cluster(**{"aks-gpu-1": True})
    with pytest.raises(CouldNotRun, match=r"--resume aks-gpu-1: not taken out by validate"):
        recheck_k8s(target(), Options(), ["aks-gpu-1"], client=api)
    assert not patches(api) and not [r for r in api.requests if r[0] == "POST"]


def test_kubeconfig_accepts_drain_and_resume() -> None:
    """Old code: '--drain does nothing with --kubeconfig: cordoning ... not implemented yet'."""
    assert refuse_ignored({"kubeconfig": "k", "sweep": True, "drain": True}) is None
    assert refuse_ignored({"kubeconfig": "k", "resume": ["aks-gpu-1"]}) is None


# -- the start window -------------------------------------------------------------------------


class Script:
    """An MPIJob that never starts; its pods as `pods(t)` says at time t."""

    def __init__(self, pods, suspended: bool = False) -> None:
        self.pods, self.suspended, self.t = pods, suspended, 0.0

    def clock(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s

    def apply(self, docs):
        pass

    def create_mpijob(self, ns, m):
        return m

    def get_mpijob(self, ns, name):
        spec = {"runPolicy": {"suspend": True}} if self.suspended else {}
        return {"metadata": {"name": name}, "spec": spec, "status": {"conditions": []}}

    def list_pods(self, ns, selector):
        role = selector.rsplit("=", 1)[1]
        return self.pods(self.t).get(role, [])

    def pod_events(self, ns, pod):
        return [{"reason": "Pulling", "message": 'Pulling image "nccl-tests:1"'}]

    def pod_log(self, ns, pod):
        return ""

    def delete_mpijob(self, ns, name):
        pass


def _pod(name, node=None, waiting=None, unschedulable=False):
    status: dict = {"phase": "Pending"}
    if waiting:
        status["containerStatuses"] = [{"image": "nccl-tests:1", "state": {"waiting": waiting}}]
    if unschedulable:
        why = {"reason": "Unschedulable", "message": "0/2 nodes available"}
        status["conditions"] = [{"type": "PodScheduled", "status": "False", **why}]
    return {
        "metadata": {"name": name},
        "spec": {"nodeName": node} if node else {},
        "status": status,
    }


def _launch(script: Script, image_bytes: int = 9 << 30) -> K8sLauncher:
    return K8sLauncher(
        script, poll_s=30, image_bytes=image_bytes, sleep=script.sleep, clock=script.clock
    )


def _manifest():
    return build_mpijob(launcher_for_sku(SKU, 2))


def test_a_launcher_pull_that_never_finishes_is_reported_as_a_pull() -> None:
    """Old code: 'did not start in 600 s: workers not running' while the workers ran."""
    creating = {"reason": "ContainerCreating"}
    script = Script(lambda t: {"worker": [], "launcher": [_pod("job-launcher", "sys-0", creating)]})
    with pytest.raises(CouldNotRun) as exc:
        _launch(script).run(_manifest())
    text = str(exc.value)
    assert "image pull of nccl-tests:1 on pod job-launcher (node sys-0) did not finish" in text
    assert "workers not running" not in text
    assert script.t > 600 + (9 << 30) / 20e6  # the window follows the image size


def test_a_big_image_pulling_on_the_workers_then_the_launcher_is_waited_for() -> None:
    """Two pulls of a 9 GiB image one after the other take longer than the old 600 s window;
    the job then starts (Running) and finishes."""
    creating = {"reason": "ContainerCreating"}

    def pods(t):
        if t < 700:
            return {"worker": [_pod("w-0", "gpu-0", creating), _pod("w-1", "gpu-1", creating)]}
        return {"launcher": [_pod("job-launcher", "sys-0", creating)]}

    script = Script(pods)
    script.get_mpijob = lambda ns, name: {  # type: ignore[method-assign]
        "metadata": {"name": name},
        "status": {
            "conditions": [{"type": "Succeeded", "status": "True"}] if script.t > 1300 else []
        },
    }
    script.pod_log = lambda ns, pod: "log"  # type: ignore[method-assign]
    assert _launch(script).run(_manifest()) == "log"


def test_queued_by_kueue_is_waited_for_and_then_said() -> None:
    script = Script(lambda t: {}, suspended=True)
    with pytest.raises(CouldNotRun, match="still queued, Kueue has not admitted it"):
        _launch(script).run(_manifest(), timeout_s=3600)
    assert script.t > 3600


def test_a_pod_waiting_for_a_new_node_gets_the_provisioning_window() -> None:
    script = Script(lambda t: {"worker": [_pod("w-0", unschedulable=True)]})
    with pytest.raises(CouldNotRun, match="unschedulable: 0/2 nodes available"):
        _launch(script).run(_manifest())
    assert script.t > 600 + 25 * 60
