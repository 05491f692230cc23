"""The power program's Azure side against a local ARM stand-in: batched start and
deallocate, 429 + Retry-After, an allocation failure, a partial failure; every request held to
Azure's published REST spec (tests/data/azure-rest/, SOURCES.md cites the files)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from clusterctl.power.azure_backend import AzureBackend
from clusterctl.power.program import Config, PowerProgram, main
from tests.power.armstandin import (
    Arm,
    StubCredential,
    Vm,
    check_against_spec,
    serve,
    spec_operations,
    standin_auth_policy,
)

CLUSTER = "demo"
SUB, RG = "00000000-0000-0000-0000-000000000001", "demo-rg"


class FakeSlurm:
    """scontrol as far as the power program uses it: hostnames and node updates."""

    def __init__(self, reasons: dict[str, str] | None = None) -> None:
        self.updates: list[list[str]] = []
        self.reasons = reasons or {}
        self.states: dict[str, str] = {}
        self.since: dict[str, str] = {}
        self.jobs: dict[str, list[str]] = {}
        self.squeues: list[list[str]] = []
        self.nodes: list[str] = []

    def __call__(self, argv):
        argv = list(argv)
        if argv[:3] == ["scontrol", "show", "hostnames"]:
            spec = argv[3]
            if "[" in spec:
                prefix, rng = spec[:-1].split("[")
                lo, hi = rng.split("-")
                return "\n".join(f"{prefix}{i}" for i in range(int(lo), int(hi) + 1)) + "\n"
            return "\n".join(spec.split(",")) + "\n"
        if argv[:2] == ["scontrol", "update"]:
            self.updates.append(argv)
            return ""
        if argv[:4] == ["sinfo", "-h", "-N", "-n"] and argv[-1] == "%N|%H":
            return "".join(f"{n}|{self.since.get(n, '2026-11-01T10:00:00')}\n"
                           for n in argv[4].split(","))  # fmt: skip
        if argv[:4] == ["sinfo", "-h", "-N", "-n"] and argv[-1] == "%N|%T|%E":
            names = argv[4].split(",")
            return "".join(f"{n}|{self.states.get(n, 'idle~')}|{self.reasons.get(n, 'none')}\n"
                           for n in names)  # fmt: skip
        if argv[:4] == ["sinfo", "-h", "-N", "-n"]:
            return self.reasons.get(argv[4], "none") + "\n"
        if argv[:1] == ["squeue"] and "-w" in argv:
            self.squeues.append(argv)
            asked = argv[argv.index("-w") + 1].split(",")
            if argv[-2:] == ["-o", "%N"]:  # each job's allocation, which may reach past `asked`
                by_job: dict[str, list[str]] = {}
                for node, jobs in self.jobs.items():
                    for j in jobs:
                        by_job.setdefault(j, []).append(node)
                return "".join(f"{','.join(ns)}\n" for ns in by_job.values()
                               if set(ns) & set(asked))  # fmt: skip
            return "".join(f"{j}\n" for n in asked for j in self.jobs.get(n, []))
        if argv == ["sinfo", "-h", "-N", "-o", "%N"]:
            return "".join(f"{n}\n" for n in self.nodes)
        raise AssertionError(argv)


@pytest.fixture
def arm():
    state = Arm(
        vms={(f"{CLUSTER}-gpu-pg0", str(i)): Vm() for i in range(4)}
        | {(f"{CLUSTER}-gpu-pg1", str(i)): Vm() for i in range(2)}
    )
    server = serve(state)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    ops = spec_operations()
    for req in state.requests:
        check_against_spec(req, ops)


def program(arm, sleeps=None):
    slept = sleeps if sleeps is not None else []
    backend = AzureBackend.from_config(
        {"subscriptionId": SUB, "resourceGroup": RG, "baseUrl": arm.base_url},
        credential=StubCredential(),
        authentication_policy=standin_auth_policy(),
    )
    now = [0.0]  # a virtual clock: every wait, the program's or the backend's, advances it

    def wait(seconds: float) -> None:
        now[0] += seconds

    backend.sleep = lambda s: (slept.append(s), wait(s))
    backend.clock = lambda: now[0]
    slurm = FakeSlurm()
    cfg = Config(cluster=CLUSTER, resume_wait_s=5, poll_s=0.01, log_file=None)
    prog = PowerProgram(cfg, backend, runner=slurm, sleep=wait, clock=lambda: now[0])
    return prog, slurm


def posts(arm):
    return [r for r in arm.requests if r.method == "POST"]


def test_resume_starts_each_scale_set_in_one_call_with_explicit_ids(arm) -> None:
    prog, slurm = program(arm)
    names = ["gpu-pg0-1", "gpu-pg0-3", "gpu-pg1-2"]
    assert prog.resume(names) == 0
    calls = [(r.path.rsplit("/", 2)[-2:], json.loads(r.body)) for r in posts(arm)]
    assert calls == [
        ([f"{CLUSTER}-gpu-pg0", "start"], {"instanceIds": ["0", "2"]}),
        ([f"{CLUSTER}-gpu-pg1", "start"], {"instanceIds": ["1"]}),
    ]
    assert arm.vms[(f"{CLUSTER}-gpu-pg0", "1")].power == "deallocated"  # not named: untouched
    assert slurm.updates == []


def test_delete_removes_exactly_the_named_vms_and_refuses_a_busy_node(arm) -> None:
    """A shrink's `gpucl-power delete`: the VMs the name map gives the leaving names are deleted
    by instance id (one DeleteInstances per scale set, explicit ids), not the highest ids Azure
    would pick on a capacity decrease; a node that runs a job is refused and keeps its VM; a
    name no VM holds is already gone; the call returns once the VMs are no longer listed."""
    prog, slurm = program(arm)
    prog._names = {f"{CLUSTER}-gpu-pg0": {"0": "gpu-pg0-1", "3": "gpu-pg0-2", "1": "gpu-pg0-3"}}
    prog._names_read = True
    slurm.jobs = {"gpu-pg0-3": ["41"]}
    assert prog.delete(["gpu-pg0-2", "gpu-pg0-3", "gpu-pg0-4"]) == 1  # one refused: busy
    assert (f"{CLUSTER}-gpu-pg0", "3") not in arm.vms  # gpu-pg0-2's VM: id 3, not the highest
    assert (f"{CLUSTER}-gpu-pg0", "1") in arm.vms  # busy gpu-pg0-3 kept
    deletes = [r for r in posts(arm) if r.path.endswith("/delete")]
    assert [json.loads(r.body) for r in deletes] == [{"instanceIds": ["3"]}]
    slurm.jobs = {}
    assert prog.delete(["gpu-pg0-3"]) == 0
    assert (f"{CLUSTER}-gpu-pg0", "1") not in arm.vms


def test_every_request_matches_the_published_spec(arm) -> None:
    prog, _ = program(arm)
    prog.resume(["gpu-pg0-1", "gpu-pg0-2"])
    prog.suspend(["gpu-pg0-1"])
    prog.rebuild("reimage", ["gpu-pg0-2"])
    prog.rebuild("redeploy", ["gpu-pg0-2"])
    ops = spec_operations()
    seen = {check_against_spec(r, ops) for r in arm.requests}
    assert seen == {
        "VirtualMachineScaleSets_Start",
        "VirtualMachineScaleSets_Deallocate",
        "VirtualMachineScaleSetVMs_List",
        "VirtualMachineScaleSetVMs_Reimage",
        "VirtualMachineScaleSetVMs_Redeploy",
    }


def test_resume_sends_its_starts_before_any_read_and_reads_one_list_per_scale_set(arm) -> None:
    """A start of a running VM is accepted and changes nothing, so resume starts first: reading
    each VM's instance view before any start cost a subscription read per node (512 nodes,
    512 reads, and under throttled reads no start before ResumeTimeout). Its watch reads one
    list of VMs with their instance views per scale set and poll, not one read per VM."""
    for i in range(2):
        arm.vms[(f"{CLUSTER}-gpu-pg0", str(i))].power = "running"
    prog, _ = program(arm)
    assert prog.resume(["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-3", "gpu-pg1-1"]) == 0
    first = arm.requests[0]
    assert first.method == "POST" and first.path.endswith(f"{CLUSTER}-gpu-pg0/start")
    gets = [r for r in arm.requests if r.method == "GET"]
    assert gets, "the watch reads the VMs once started"
    assert all(r.path.endswith("/virtualMachines") for r in gets)
    assert all(r.query.get("$expand") == ["instanceView"] for r in gets)
    assert arm.vms[(f"{CLUSTER}-gpu-pg0", "0")].power == "running"


def test_throttled_request_waits_retry_after_then_succeeds(arm) -> None:
    arm.throttle, arm.retry_after = 2, "7"
    sleeps: list[float] = []
    prog, _ = program(arm, sleeps)
    assert prog.suspend(["gpu-pg0-1", "gpu-pg0-2"]) == 0
    assert sleeps == [7.0, 7.0]
    assert [json.loads(r.body) for r in posts(arm)] == [{"instanceIds": ["0", "1"]}] * 3


def test_allocation_failure_marks_the_node_down_with_the_cause(arm) -> None:
    arm.vms[(f"{CLUSTER}-gpu-pg0", "1")].allocation_fails = True
    prog, slurm = program(arm)
    assert prog.resume(["gpu-pg0-1", "gpu-pg0-2"]) == 1
    assert arm.vms[(f"{CLUSTER}-gpu-pg0", "0")].power == "running"
    assert slurm.updates == [
        [
            "scontrol",
            "update",
            "NodeName=gpu-pg0-2",
            "State=DOWN",
            "Reason=gpucl: power: start failed: AllocationFailed: no capacity for the size in "
            "this region",
        ]
    ]
    # ... and its VM is deallocated again, one id only.
    last = posts(arm)[-1]
    assert last.path.endswith(f"{CLUSTER}-gpu-pg0/deallocate")
    assert json.loads(last.body) == {"instanceIds": ["1"]}


def test_partial_failure_retries_one_by_one_and_starts_the_rest(arm) -> None:
    arm.vms[(f"{CLUSTER}-gpu-pg0", "2")].refuse = "OperationNotAllowed"
    prog, slurm = program(arm)
    assert prog.resume(["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-3"]) == 1
    assert arm.vms[(f"{CLUSTER}-gpu-pg0", "0")].power == "running"
    assert arm.vms[(f"{CLUSTER}-gpu-pg0", "1")].power == "running"
    assert [u[2] for u in slurm.updates] == ["NodeName=gpu-pg0-3"]
    assert "OperationNotAllowed" in slurm.updates[0][4]
    one_by_one = [r.path for r in posts(arm) if "/virtualMachines/" in r.path]
    assert [p.rsplit("/", 3)[-3:] for p in one_by_one][:3] == [
        ["virtualMachines", "0", "start"],
        ["virtualMachines", "1", "start"],
        ["virtualMachines", "2", "start"],
    ]


def test_suspend_is_idempotent(arm) -> None:
    prog, slurm = program(arm)
    assert prog.suspend(["gpu-pg1-1"]) == 0
    assert prog.suspend(["gpu-pg1-1"]) == 0
    assert arm.vms[(f"{CLUSTER}-gpu-pg1", "0")].power == "deallocated"
    assert slurm.updates == []


def test_suspend_touches_no_drain_whoever_owns_it(arm) -> None:
    """A drained node powers down with its drain, reason and owner kept; the suspend program
    never lifts one (the old code RESUMEd a spot drain, which on a powered-down node asks it to
    register; Slurm already clears the drain of a node forced down on request)."""
    prog, slurm = program(arm)
    slurm.reasons = {
        "gpu-pg0-1": "gpucl: spot: spot eviction notice (1a2b3c4d)",
        "gpu-pg0-2": "disk swap (admin)",
        "gpu-pg0-3": "gpucl: health: gpu count 7 of 8",
    }
    assert prog.suspend(["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-3", "gpu-pg0-4"]) == 0
    assert slurm.updates == []


def test_return_makes_only_its_own_powered_down_down_nodes_idle(arm) -> None:
    """`gpucl-power return ALL` (the scheduler's timer): a node a failed power-up left DOWN
    returns to the powered-down pool with State=IDLE once its VM is stopped; a node DOWN or
    drained by anyone else, one still powering down, and one whose VM runs stay as they are."""
    prog, slurm = program(arm)
    arm.vms[(f"{CLUSTER}-gpu-pg0", "3")].power = "running"
    slurm.nodes = ["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-3", "gpu-pg0-4", "gpu-pg1-1", "gpu-pg1-2"]
    slurm.states = {
        "gpu-pg0-1": "down~",
        "gpu-pg0-2": "down~",
        "gpu-pg0-3": "drained~",
        "gpu-pg0-4": "down~",
        "gpu-pg1-1": "down%",
        "gpu-pg1-2": "down~",
    }
    slurm.reasons = {
        "gpu-pg0-1": "gpucl: power: start failed: AllocationFailed",
        "gpu-pg0-2": "rack maintenance (admin)",
        "gpu-pg0-3": "gpucl: power: not registered within ResumeTimeout (VM stopped); deallocated",
        "gpu-pg0-4": "gpucl: power: start failed: AllocationFailed",
        "gpu-pg1-1": "gpucl: power: start failed: AllocationFailed",
        "gpu-pg1-2": "gpucl: power: not registered within ResumeTimeout (VM stopped); deallocated",
    }
    assert main(["return", "ALL"], backend=prog.backend, runner=slurm, config=prog.config) == 0
    assert slurm.updates == [
        ["scontrol", "update", "NodeName=gpu-pg0-1,gpu-pg1-2", "State=IDLE"],
    ]


def test_return_holds_a_node_down_until_its_failure_is_return_after_old(arm) -> None:
    """A node whose power-up failed a minute ago stays DOWN (the job it failed is requeued and
    placed elsewhere first; with no hold the 5-min timer could hand the bad node straight back
    to that job, seen in CI); one that failed before the hold is given back; one whose reason
    time sinfo does not give is given back, as before the hold."""
    prog, slurm = program(arm)
    prog.config.return_after_s = 900
    prog.now = lambda: datetime(2026, 11, 24, 10, 0, 0).timestamp()
    slurm.nodes = ["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-3"]
    slurm.states = {n: "down~" for n in slurm.nodes}
    slurm.reasons = {n: "gpucl: power: start failed: AllocationFailed" for n in slurm.nodes}
    slurm.since = {
        "gpu-pg0-1": "2026-11-24T09:59:00",
        "gpu-pg0-2": "2026-11-24T09:44:00",
        "gpu-pg0-3": "Unknown",
    }
    assert prog.give_back(slurm.nodes) == 0
    assert slurm.updates == [
        ["scontrol", "update", "NodeName=gpu-pg0-2,gpu-pg0-3", "State=IDLE"],
    ]


def test_fail_names_the_cause_and_deallocates(arm) -> None:
    arm.vms[(f"{CLUSTER}-gpu-pg0", "0")].power = "running"
    prog, slurm = program(arm)
    assert prog.fail(["gpu-pg0-1"]) == 1
    assert slurm.updates[0][3:] == [
        "State=DOWN",
        "Reason=gpucl: power: not registered within ResumeTimeout (VM running); deallocated",
    ]
    assert arm.vms[(f"{CLUSTER}-gpu-pg0", "0")].power == "deallocated"


def test_main_expands_the_hostlist_with_scontrol_and_exits_like_slurm_expects(arm) -> None:
    _, _ = program(arm)
    backend = AzureBackend.from_config(
        {"subscriptionId": SUB, "resourceGroup": RG, "baseUrl": arm.base_url},
        credential=StubCredential(),
        authentication_policy=standin_auth_policy(),
    )
    slurm = FakeSlurm()
    cfg = Config(cluster=CLUSTER, resume_wait_s=0, log_file=None)
    assert main(["suspend", "gpu-pg0-[1-4]"], backend=backend, runner=slurm, config=cfg) == 0
    assert json.loads(posts(arm)[0].body) == {"instanceIds": ["0", "1", "2", "3"]}
    assert main(["suspend", "login-1"], backend=backend, runner=slurm, config=cfg) == 2
    assert main(["explode", "gpu-pg0-1"], backend=backend, runner=slurm, config=cfg) == 2


def test_a_scale_set_call_without_ids_is_never_made(arm) -> None:
    prog, _ = program(arm)
    assert prog.resume([]) == 0
    assert prog.suspend([]) == 0
    assert posts(arm) == []


ROLE_ACTION_OF_OPERATION = {
    "VirtualMachineScaleSets_Start": "Microsoft.Compute/virtualMachineScaleSets/start/action",
    "VirtualMachineScaleSets_Deallocate": (
        "Microsoft.Compute/virtualMachineScaleSets/deallocate/action"
    ),
    "VirtualMachineScaleSetVMs_Start": (
        "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/start/action"
    ),
    "VirtualMachineScaleSetVMs_Deallocate": (
        "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/deallocate/action"
    ),
    "VirtualMachineScaleSetVMs_Reimage": (
        "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/reimage/action"
    ),
    "VirtualMachineScaleSetVMs_Redeploy": (
        "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/redeploy/action"
    ),
    "VirtualMachineScaleSetVMs_List": (
        "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read"
    ),
    "VirtualMachineScaleSets_DeleteInstances": (
        "Microsoft.Compute/virtualMachineScaleSets/delete/action"
    ),
}
"""The RBAC action each spec operation needs (MicrosoftDocs, resource provider operations,
Microsoft.Compute); the role test asserts the role holds exactly these."""


def test_the_program_calls_exactly_the_operations_the_role_allows(arm) -> None:
    arm.vms[(f"{CLUSTER}-gpu-pg1", "1")].refuse = "OperationNotAllowed"
    prog, _ = program(arm)
    prog.resume(["gpu-pg0-1", "gpu-pg1-1", "gpu-pg1-2"])
    arm.vms[(f"{CLUSTER}-gpu-pg1", "1")].refuse = None
    arm.vms[(f"{CLUSTER}-gpu-pg0", "0")].refuse = "Conflict"
    prog.suspend(["gpu-pg0-1", "gpu-pg0-2"])
    arm.vms[(f"{CLUSTER}-gpu-pg0", "0")].refuse = None
    prog.rebuild("reimage", ["gpu-pg0-2"])
    prog.rebuild("redeploy", ["gpu-pg0-2"])
    assert prog.backend.list(f"{CLUSTER}-gpu-pg0") == ["0", "1", "2", "3"]  # the name map's read
    assert prog.delete(["gpu-pg1-2"]) == 0
    ops = spec_operations()
    assert {check_against_spec(r, ops) for r in arm.requests} == set(ROLE_ACTION_OF_OPERATION)


def test_a_refused_deallocate_is_sent_again_until_accepted(arm) -> None:
    """A deallocate refused once (an operation in progress on the VM) is retried within the
    run: the node does not go DOWN with its VM billing."""
    vm = arm.vms[(f"{CLUSTER}-gpu-pg0", "1")]
    vm.power = "running"
    vm.refuse = "OperationNotAllowed"
    prog, slurm = program(arm)
    real_stop = prog.backend.stop

    def stop(refs):
        out = real_stop(refs)
        vm.refuse = None  # accepted from the second try on
        return out

    prog.backend.stop = stop
    assert prog.suspend(["gpu-pg0-1", "gpu-pg0-2"]) == 0
    assert vm.power == "deallocated"
    assert slurm.updates == []


def test_a_deallocate_refused_to_the_deadline_sets_down_and_return_deallocates_it(arm) -> None:
    """Refused until the run's deadline: DOWN with the reason; the return timer then sends the
    deallocate again while the VM runs, and returns the node once its VM is stopped."""
    vm = arm.vms[(f"{CLUSTER}-gpu-pg0", "1")]
    vm.power, vm.refuse = "running", "OperationNotAllowed"
    prog, slurm = program(arm)
    prog.config.suspend_deadline_s = 300
    assert prog.suspend(["gpu-pg0-2"]) == 1
    assert slurm.updates[-1][3] == "State=DOWN"
    assert "deallocate failed: OperationNotAllowed" in slurm.updates[-1][4]
    assert vm.power == "running"
    slurm.nodes = ["gpu-pg0-2"]
    slurm.states = {"gpu-pg0-2": "down~"}
    slurm.reasons = {"gpu-pg0-2": slurm.updates[-1][4].removeprefix("Reason=")}
    vm.refuse = None
    assert prog.give_back(["gpu-pg0-2"]) == 0
    assert vm.power == "deallocated"
    assert prog.give_back(["gpu-pg0-2"]) == 0
    assert slurm.updates[-1] == ["scontrol", "update", "NodeName=gpu-pg0-2", "State=IDLE"]


def test_retry_after_is_honoured_past_two_minutes_up_to_the_runs_deadline(arm) -> None:
    """ARM may ask for a long wait: honoured while it ends before the run's deadline (below
    slurmctld's timeout), shared by every call of the run; one that would pass it is not made."""
    arm.throttle, arm.retry_after = 2, "400"
    sleeps: list[float] = []
    prog, _ = program(arm, sleeps)
    assert prog.suspend(["gpu-pg0-1"]) == 1  # SuspendTimeout's deadline: 540 s, one wait fits
    assert sleeps == [400.0]
    arm.throttle = 2
    sleeps.clear()
    prog, _ = program(arm, sleeps)
    prog.config.resume_wait_s = 0
    assert prog.resume(["gpu-pg0-1"]) == 0  # ResumeTimeout's deadline: 1,740 s, both fit
    assert sleeps == [400.0, 400.0]
    assert arm.vms[(f"{CLUSTER}-gpu-pg0", "0")].power == "running"


def test_a_batch_throttled_to_the_deadline_is_not_split_into_single_vm_calls(arm) -> None:
    arm.throttle, arm.retry_after = 100, "400"
    prog, slurm = program(arm)
    prog.config.suspend_deadline_s = 60
    assert prog.suspend(["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-3"]) == 1
    assert [r.path.rsplit("/", 1)[-1] for r in posts(arm)] == ["deallocate"]
    assert "/virtualMachines/" not in posts(arm)[0].path
    assert len(slurm.updates) == 3


def test_return_writes_every_down_node_whose_vm_bills_with_its_price(arm, tmp_path) -> None:
    """Whoever set it DOWN, a node whose VM runs is written down with its hourly price, in the
    record `clusterctl status` reads and the textfile Prometheus alerts on; only the power
    program's own DOWN is deallocated; a DOWN node whose VM is stopped is not listed."""
    from clusterctl.power import down_billing as leak

    arm.vms[(f"{CLUSTER}-gpu-pg0", "1")].power = "running"  # gpu-pg0-2: ours, refused before
    arm.vms[(f"{CLUSTER}-gpu-pg1", "0")].power = "running"  # gpu-pg1-1: an admin's DOWN
    prog, slurm = program(arm)
    prog.config.names_root = str(tmp_path)
    prog.config.down_billing_record = True
    prog.config.textfile = str(tmp_path / "down.prom")
    prog.config.prices = {f"{CLUSTER}-gpu-pg0": 98.32}
    prog.now = lambda: 1_800_000_000.0
    slurm.nodes = ["gpu-pg0-2", "gpu-pg0-3", "gpu-pg1-1", "gpu-pg1-2"]
    slurm.states = {"gpu-pg0-2": "down~", "gpu-pg0-3": "down~", "gpu-pg1-1": "down*",
                    "gpu-pg1-2": "idle"}  # fmt: skip
    slurm.reasons = {
        "gpu-pg0-2": "gpucl: power: deallocate failed: OperationNotAllowed",
        "gpu-pg0-3": "gpucl: power: start failed: AllocationFailed",
        "gpu-pg1-1": "admin: bad DIMM",
    }

    assert prog.give_back(slurm.nodes) == 0

    record = leak.parse(leak.record_path(CLUSTER, tmp_path).read_text())
    assert record["checkedAt"] == 1_800_000_000.0
    assert record["nodes"] == [
        {"node": "gpu-pg0-2", "vm": f"{CLUSTER}-gpu-pg0_1", "power": "running",
         "reason": "gpucl: power: deallocate failed: OperationNotAllowed", "usdPerHour": 98.32,
         "deallocateSent": True},
        {"node": "gpu-pg1-1", "vm": f"{CLUSTER}-gpu-pg1_0", "power": "running",
         "reason": "admin: bad DIMM", "usdPerHour": None, "deallocateSent": False},
    ]  # fmt: skip
    assert arm.vms[(f"{CLUSTER}-gpu-pg0", "1")].power == "deallocated"
    assert arm.vms[(f"{CLUSTER}-gpu-pg1", "0")].power == "running"  # not ours: left alone
    prom = (tmp_path / "down.prom").read_text()
    assert 'gpucl_node_down_vm_running{node="gpu-pg0-2",' in prom and "} 98.32" in prom
    assert 'node="gpu-pg1-1"' in prom and "} 1.00" in prom
    assert "gpucl_down_vm_running_usd_per_hour" not in prom  # one price unknown: no false sum
    assert "gpucl_down_vm_running_checked_timestamp_seconds 1800000000" in prom

    slurm.states = {n: "idle~" for n in slurm.nodes}
    assert prog.give_back(slurm.nodes) == 0
    assert leak.parse(leak.record_path(CLUSTER, tmp_path).read_text())["nodes"] == []
