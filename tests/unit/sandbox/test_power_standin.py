"""The sandbox's stand-in for the scheduler's Azure calls: only the scheduler's address may call it
(as only its identity holds the power role), VMs are named as Azure names them, and a VM that is
not in the sandbox is an error, not a silent success. No root needed: nothing is started here."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import labserver, power, vmstate


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    state = vmstate.VmState(workdir=str(tmp_path), sid=vmstate.sandbox_id(tmp_path))
    # no nspawn recorded for the node: its VM reads as deallocated
    state.nodes = {
        "sched": {"role": "scheduler", "address": "127.0.0.1", "vm_name": "sched"},
        "gpu-pg0-000000": {"role": "gpu", "address": "10.0.0.5", "vm_name": "h100-gpu-pg0_0"},
    }
    state.save()
    return tmp_path


def test_state_names_vms_as_azure_does_and_refuses_strangers(sandbox: Path) -> None:
    got = power.act(sandbox, "state", ["h100-gpu-pg0_0", "h100-gpu-pg0_7", "sched"])
    assert got["h100-gpu-pg0_0"] == {"power": "stopped", "error": None}
    assert "no GPU node VM named h100-gpu-pg0_7" in got["h100-gpu-pg0_7"]["error"]
    assert "no GPU node VM named sched" in got["sched"]["error"]  # the scheduler is not power's
    assert "no GPU node VM" in power.act(sandbox, "start", ["h100-gpu-pg0_7"])["h100-gpu-pg0_7"]
    with pytest.raises(power.PowerError, match="unknown action"):
        power.act(sandbox, "explode", [])


def _serve(sandbox: Path, role: str):
    vm_map = sandbox / "vms.json"
    vm_map.write_text(json.dumps({"127.0.0.1": {"hostnames": ["x"], "role": role}}))

    class Handler(labserver.LabHandler):
        pass

    Handler.vm_map, Handler.workdir = vm_map, sandbox
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _post(server, action: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.server_address[1]}/gpucl-sandbox/power/{action}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_only_the_scheduler_may_call(sandbox: Path) -> None:
    server = _serve(sandbox, "gpu")
    try:
        code, body = _post(server, "start", {"vms": ["h100-gpu-pg0_0"]})
        assert code == 403 and "holds no power role" in body["error"]
    finally:
        server.shutdown()


def test_the_scheduler_gets_each_vms_state(sandbox: Path) -> None:
    server = _serve(sandbox, "scheduler")
    try:
        code, body = _post(server, "state", {"vms": ["h100-gpu-pg0_0"]})
        assert (code, body) == (200, {"h100-gpu-pg0_0": {"power": "stopped", "error": None}})
    finally:
        server.shutdown()


def test_the_cli_lists_every_fault_the_sandbox_knows() -> None:
    from clusterctl.cli.sandbox_vm import FAULTS
    from clusterctl.sandbox.vm.faults import KINDS

    assert FAULTS == KINDS


def test_boot_hangs_masks_slurmd_on_the_os_disk_and_clear_unmasks_it(sandbox: Path) -> None:
    from clusterctl.sandbox.vm import machine

    state = vmstate.load(sandbox)
    assert state is not None
    root = machine.node_dir(state, "gpu-pg0-000000") / "root"
    unit = root / machine.SLURMD_MASK
    machine.mask_slurmd(state, "gpu-pg0-000000")
    assert unit.is_symlink() and str(unit.readlink()) == "/dev/null"
    machine.unmask_slurmd(state, "gpu-pg0-000000")
    assert not unit.is_symlink()
    unit.write_text("[Service]\n")  # an admin's own unit file is not a mask: left alone
    machine.unmask_slurmd(state, "gpu-pg0-000000")
    assert unit.read_text() == "[Service]\n"


def test_list_gives_the_instance_ids_of_each_scale_set(sandbox: Path) -> None:
    """The name map's read (gpucl-power names): instance ids as Azure lists them, GPU VMs only."""
    state = vmstate.load(sandbox)
    state.nodes["gpu-pg0-000004"] = {
        "role": "gpu",
        "address": "10.0.0.9",
        "vm_name": "h100-gpu-pg0_4",
    }
    state.nodes["gpu-pg1-000000"] = {
        "role": "gpu",
        "address": "10.0.0.7",
        "vm_name": "h100-gpu-pg1_0",
    }
    state.save()
    got = power.act(sandbox, "list", ["h100-gpu-pg0", "h100-gpu-pg1", "h100-gpu-pg9"])
    assert got == {"h100-gpu-pg0": ["0", "4"], "h100-gpu-pg1": ["0"], "h100-gpu-pg9": []}
