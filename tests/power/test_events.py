"""The node's Scheduled Events watcher against IMDS documents shaped as Microsoft documents them
(MicrosoftDocs azure-docs articles/virtual-machines/linux/scheduled-events.md, api 2020-07-01)."""

from __future__ import annotations

import json

import pytest

from clusterctl.power.events import Watcher

VM = "demo-gpu-pg0_2"
NODE = "gpu-pg0-3"


def doc(kind: str, resources: list[str], event_id: str = "602d9444-d2cd-49c7-8624-8643e7171297"):
    return {
        "DocumentIncarnation": 2,
        "Events": [
            {
                "EventId": event_id,
                "EventType": kind,
                "ResourceType": "VirtualMachine",
                "Resources": resources,
                "EventStatus": "Scheduled",
                "NotBefore": "Mon, 19 Sep 2016 18:29:47 GMT",
                "Description": "",
                "EventSource": "Platform",
                "DurationInSeconds": -1,
            }
        ],
    }


class FakeSlurm:
    def __init__(self, jobs: str = "41\n42\n", state: str = "mixed", reason: str = "none") -> None:
        self.calls: list[list[str]] = []
        self.jobs = jobs
        self.state, self.reason = state, reason

    def __call__(self, argv):
        if argv[0] == "sinfo":
            return f"{NODE}|{self.state}|{self.reason}\n"
        self.calls.append(list(argv))
        return self.jobs if argv[0] == "squeue" else ""


def watcher(slurm: FakeSlurm, approved: list[str]) -> Watcher:
    return Watcher(VM, NODE, "gpucl:", runner=slurm, approve=approved.append)


def test_preemption_drains_requeues_approves_and_powers_down_once() -> None:
    slurm, approved = FakeSlurm(), []
    w = watcher(slurm, approved)
    event = doc("Preempt", [VM, "demo-gpu-pg0_5"])
    w.handle(event)
    assert slurm.calls == [
        [
            "scontrol",
            "update",
            f"NodeName={NODE}",
            "State=DRAIN",
            "Reason=gpucl: spot: spot eviction notice (602d9444)",
        ],
        ["squeue", "-h", "-w", NODE, "-t", "RUNNING,CONFIGURING,COMPLETING", "-o", "%i"],
        ["scontrol", "requeue", "41,42"],
        [
            "scontrol",
            "update",
            f"NodeName={NODE}",
            "State=POWER_DOWN_FORCE",
            "Reason=gpucl: spot: spot eviction notice (602d9444)",
        ],
    ]
    assert approved == ["602d9444-d2cd-49c7-8624-8643e7171297"]
    w.handle(event)  # the same document, polled again a second later
    assert len(slurm.calls) == 4


def test_events_for_other_vms_and_empty_documents_are_ignored() -> None:
    slurm, approved = FakeSlurm(), []
    w = watcher(slurm, approved)
    w.handle(doc("Preempt", ["demo-gpu-pg0_5"]))
    w.handle({"DocumentIncarnation": 1, "Events": []})
    assert slurm.calls == [] and approved == []


def test_maintenance_only_drains_and_is_not_approved() -> None:
    slurm, approved = FakeSlurm(), []
    w = watcher(slurm, approved)
    w.handle(doc("Redeploy", [VM]))
    assert slurm.calls == [
        [
            "scontrol",
            "update",
            f"NodeName={NODE}",
            "State=DRAIN",
            "Reason=gpucl: maintenance: Redeploy at Mon, 19 Sep 2016 18:29:47 GMT (602d9444)",
        ]
    ]
    assert approved == []


def test_a_failed_scontrol_is_retried_at_the_next_poll() -> None:
    calls = []

    def flaky(argv):
        calls.append(argv)
        if len(calls) == 1:
            raise RuntimeError("slurmctld not reachable")
        return ""

    w = Watcher(VM, NODE, runner=flaky)
    event = doc("Preempt", [VM])
    with pytest.raises(RuntimeError):
        w.handle(event)
    assert w.handled == set()
    w.handle(event)
    assert calls[-1][3] == "State=POWER_DOWN_FORCE"


def test_node_name_follows_the_vm_name() -> None:
    from clusterctl.power.names import node_name, node_ref

    assert node_name("demo", VM) == NODE
    assert node_ref("demo", NODE).instance_id == "2"
    assert node_ref("demo", NODE).scale_set == "demo-gpu-pg0"


@pytest.mark.parametrize(
    "reason", ["disk swap (admin)", "gpucl: health: gpu count 7 of 8", "gpucl: validate: slow pair"]
)
def test_an_eviction_keeps_a_drain_someone_else_set(reason: str) -> None:
    """Requeue and approve, but neither overwrite the drain nor ask Slurm to power the node down
    (a requested power-down clears a drain): the old code replaced the reason and forced it down."""
    slurm, approved = FakeSlurm(state="draining", reason=reason), []
    done = watcher(slurm, approved).handle(doc("Preempt", [VM]))
    assert slurm.calls == [
        ["squeue", "-h", "-w", NODE, "-t", "RUNNING,CONFIGURING,COMPLETING", "-o", "%i"],
        ["scontrol", "requeue", "41,42"],
    ]
    assert approved and done[0] == f"keep {NODE}'s drain '{reason}': Preempt"


def test_maintenance_keeps_a_drain_someone_else_set() -> None:
    slurm, approved = FakeSlurm(state="drained", reason="rack move (admin)"), []
    watcher(slurm, approved).handle(doc("Redeploy", [VM]))
    assert slurm.calls == []


def test_the_watcher_takes_its_node_name_from_the_name_map(tmp_path) -> None:
    """Instance 2 holds gpu-pg0-1 after a re-created VM took the freed name: the
    watcher must drain gpu-pg0-1, not the gpu-pg0-3 the old rule (id + 1) gave."""
    from clusterctl.power.events import own_node

    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "names.json").write_text(
        json.dumps({"names": {"demo-gpu-pg0": {"2": "gpu-pg0-1", "0": "gpu-pg0-3"}}})
    )
    assert own_node("demo", VM, tmp_path) == "gpu-pg0-1"
    with pytest.raises(LookupError):
        own_node("demo", "demo-gpu-pg0_7", tmp_path)
    assert own_node("demo", VM, tmp_path / "none") == NODE  # no map yet: the old rule
