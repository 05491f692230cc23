"""`gpucl-power names` on the name map's less travelled paths, against the ARM stand-in: the first
run (no names.json yet), a map already right (left byte for byte), a VM with no free name within
the grace, a boot request file that names no VM, and a VM whose name left slurm.conf."""

from __future__ import annotations

import json

from clusterctl.power.program import main
from tests.power.test_power_names import MAP, SET, arm, posts, setup

__all__ = ["arm"]  # the fixture, used by name


def _doc(tmp_path) -> dict:
    return json.loads((tmp_path / "demo" / "names.json").read_text())


def test_the_first_run_names_every_vm_in_id_order(arm, tmp_path) -> None:
    _, slurm, cfg, backend = setup(arm, tmp_path, None)
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 0
    assert _doc(tmp_path)["names"] == {SET: MAP}


def test_a_map_already_right_is_not_rewritten(arm, tmp_path) -> None:
    _, slurm, cfg, backend = setup(arm, tmp_path, MAP)
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 0
    before = (tmp_path / "demo" / "names.json").stat().st_ino
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 0
    assert (tmp_path / "demo" / "names.json").stat().st_ino == before  # not replaced


def test_a_vm_with_no_free_name_waits_within_the_grace(arm, tmp_path, caplog) -> None:
    arm.vms[(SET, "6")] = arm.vms[(SET, "0")].__class__()
    _, slurm, cfg, backend = setup(arm, tmp_path, MAP)
    (tmp_path / "demo" / "name-requests" / "not-a-vm-name").touch()
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 0
    assert f"{SET}_6 has no name yet (no free name in slurm.conf)" in caplog.text
    assert (tmp_path / "demo" / "name-requests" / "not-a-vm-name").exists()
    assert posts(arm) == []


def test_a_vm_whose_name_left_slurm_conf_is_deallocated(arm, tmp_path, caplog) -> None:
    _, slurm, cfg, backend = setup(arm, tmp_path, MAP, nodes=2)
    assert main(["names"], backend=backend, runner=slurm, config=cfg) == 0
    assert posts(arm) == [([SET, "deallocate"], {"instanceIds": ["4", "5"]})]
    assert f"names: {SET}_4 has no Slurm name: deallocated" in caplog.text
    assert _doc(tmp_path)["names"] == {SET: {"0": "gpu-pg0-1", "1": "gpu-pg0-2"}}
