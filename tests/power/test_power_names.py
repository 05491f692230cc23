"""The power program through the name map, against the ARM stand-in: after
4 -> 2 -> 4 nodes the VMs of a scale set are instances 0, 1, 4, 5, and `gpu-pg0-3` must start
instance 4, not the instance 2 that no longer exists. `gpucl-power names` keeps the map from
VirtualMachineScaleSetVMs_List (paged), every request held to the REST spec."""

from __future__ import annotations

import json

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
from tests.power.test_power_azure import RG, SUB, FakeSlurm

CLUSTER = "demo"
SET = f"{CLUSTER}-gpu-pg0"


@pytest.fixture
def arm():
    state = Arm(vms={(SET, i): Vm() for i in ("0", "1", "4", "5")})
    server = serve(state)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    ops = spec_operations()
    for req in state.requests:
        check_against_spec(req, ops)


def setup(arm, tmp_path, names: dict | None, nodes: int = 4, grace: float = 900.0):
    backend = AzureBackend.from_config(
        {"subscriptionId": SUB, "resourceGroup": RG, "baseUrl": arm.base_url},
        credential=StubCredential(),
        authentication_policy=standin_auth_policy(),
    )
    backend.sleep = lambda s: None
    slurm = FakeSlurm()
    slurm.nodes = [f"gpu-pg0-{n}" for n in range(1, nodes + 1)]
    cfg = Config(
        cluster=CLUSTER,
        resume_wait_s=5,
        poll_s=0.01,
        log_file=None,
        names_root=str(tmp_path),
        names_grace_s=grace,
    )
    (tmp_path / CLUSTER / "name-requests").mkdir(parents=True)
    if names is not None:
        (tmp_path / CLUSTER / "names.json").write_text(json.dumps({"names": {SET: names}}))
    prog = PowerProgram(cfg, backend, runner=slurm, sleep=lambda s: None)
    return prog, slurm, cfg, backend


def posts(arm):
    return [(r.path.rsplit("/", 2)[-2:], json.loads(r.body)) for r in arm.requests
            if r.method == "POST"]  # fmt: skip


MAP = {"0": "gpu-pg0-1", "1": "gpu-pg0-2", "4": "gpu-pg0-3", "5": "gpu-pg0-4"}


def test_resume_starts_the_vm_the_map_names_not_instance_n_minus_1(arm, tmp_path) -> None:
    prog, slurm, _, _ = setup(arm, tmp_path, MAP)
    assert prog.resume(["gpu-pg0-3", "gpu-pg0-4"]) == 0
    assert posts(arm) == [([SET, "start"], {"instanceIds": ["4", "5"]})]
    assert arm.vms[(SET, "4")].power == "running" and slurm.updates == []
    assert prog.suspend(["gpu-pg0-3"]) == 0
    assert posts(arm)[-1] == ([SET, "deallocate"], {"instanceIds": ["4"]})


def test_a_name_no_vm_holds_is_set_down_and_nothing_else_is_started(arm, tmp_path) -> None:
    prog, slurm, _, _ = setup(arm, tmp_path, {"0": "gpu-pg0-1"})
    assert prog.resume(["gpu-pg0-1", "gpu-pg0-2"]) == 1
    assert posts(arm)[0] == ([SET, "start"], {"instanceIds": ["0"]})
    assert any("NodeName=gpu-pg0-2" in " ".join(u) and "no VM holds" in " ".join(u)
               for u in slurm.updates)  # fmt: skip


def test_names_follows_the_listed_vms_after_4_to_2_to_4(arm, tmp_path) -> None:
    old = {"0": "gpu-pg0-1", "1": "gpu-pg0-2", "2": "gpu-pg0-3", "3": "gpu-pg0-4"}
    _, slurm, cfg, backend = setup(arm, tmp_path, old)
    for vm in ("4", "5"):  # both new nodes wait at boot for their names
        (tmp_path / CLUSTER / "name-requests" / f"{SET}_{vm}").touch()
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 0
    doc = json.loads((tmp_path / CLUSTER / "names.json").read_text())
    assert doc["names"] == {SET: MAP}
    assert list((tmp_path / CLUSTER / "name-requests").iterdir()) == []  # answered
    assert posts(arm) == []  # every VM has a name: nothing deallocated
    gets = [r for r in arm.requests if r.method == "GET"]
    assert [g.query.get("$skiptoken") for g in gets] == [None, ["2"]]  # two pages, nextLink
    assert {check_against_spec(r, spec_operations()) for r in gets} == {
        "VirtualMachineScaleSetVMs_List"
    }


def test_names_leaves_a_vm_without_a_name_running_and_reports_it(arm, tmp_path, caplog) -> None:
    """Past the grace a VM without a name is reported, never stopped nor deleted: it may be a
    growth's, whose name the config sync brings later."""
    arm.vms[(SET, "6")] = Vm(power="running")
    _, slurm, cfg, backend = setup(arm, tmp_path, MAP, grace=0.0)
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 0
    assert posts(arm) == []
    assert arm.vms[(SET, "6")].power == "running"
    doc = json.loads((tmp_path / CLUSTER / "names.json").read_text())
    assert doc["unnamed"][SET]["6"]["deallocated"] is False
    assert f"{SET}_6 has had no name for over 0 s and runs" in caplog.text


def test_names_writes_nothing_when_slurm_lists_no_node(arm, tmp_path) -> None:
    _, slurm, cfg, backend = setup(arm, tmp_path, MAP, nodes=0)
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 2
    assert json.loads((tmp_path / CLUSTER / "names.json").read_text()) == {"names": {SET: MAP}}
    assert posts(arm) == []


def test_names_frees_a_deleted_scale_sets_names_and_stops_on_a_missing_one_slurm_names(
    arm, tmp_path
) -> None:
    """A scale set that left the stack (a shrink that removed pg1) is deleted by Pulumi, and ARM
    answers its list with 404: its names are freed and the rest of the map kept (the old code
    raised on the 404 and never wrote the map again). A set slurm.conf still names that is gone
    is an error: nothing is written."""
    other = f"{CLUSTER}-gpu-pg1"
    _, slurm, cfg, backend = setup(arm, tmp_path, MAP)
    path = tmp_path / CLUSTER / "names.json"
    path.write_text(json.dumps({"names": {SET: MAP, other: {"0": "gpu-pg1-1"}}}))
    arm.deleted_sets = {other}
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 0
    assert json.loads(path.read_text())["names"] == {SET: MAP}
    path.write_text(json.dumps({"names": {SET: MAP, other: {"0": "gpu-pg1-1"}}}))
    slurm.nodes.append("gpu-pg1-1")
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 2
    assert json.loads(path.read_text())["names"][other] == {"0": "gpu-pg1-1"}
