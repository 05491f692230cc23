"""The sandbox's stand-in nvidia-smi does MIG as nvidia-smi does (mode, `mig -cgi/-lgi/-dgi`, MIG
lines under `-L`), so a MIG partition's boot step (gpucl-mig.sh) and health check run on it."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from clusterctl.render.scripts import node_scripts
from clusterctl.render.site import cloud_site
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.mig import cap_minor

MIG7 = "partitions[0].sharing={mig: {1g.10gb: 7}}"
STANDIN = Path("clusterctl/sandbox/vm/files/rootfs/usr/bin/nvidia-smi")


def _mig_script(gpus: int, *overrides: str) -> str:
    """gpucl-mig.sh as a MIG partition's nodes get it, for a node of `gpus` GPUs."""
    spec, _ = load_stack_spec("azure-h100", [MIG7, *overrides])
    part = spec.partitions[0]
    script = node_scripts(spec, cloud_site(spec), catalog().require(part.sku), part)
    return script["gpucl-mig.sh"].replace("seq 0 7", f"seq 0 {gpus - 1}")


def _standin(tmp_path: Path, gpus: int = 2) -> Path:
    """The sandbox's nvidia-smi on a tmp /dev and state dir, first on PATH."""
    dev = tmp_path / "dev"
    (dev / "nvidia-caps").mkdir(parents=True)
    for g in range(gpus):
        (dev / f"nvidia{g}").touch()
        for gi in range(15):
            (dev / "nvidia-caps" / f"nvidia-cap{cap_minor(g, gi)}").touch()
    text = STANDIN.read_text().replace("/dev/nvidia", f"{dev}/nvidia")
    text = text.replace("/run/gpucl-sandbox/mig", str(tmp_path / "mig"))
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    # root, as the boot step runs (the stand-in makes instances only for root, as nvidia-smi)
    (bin_ / "id").write_text("#!/bin/sh\necho 0\n")
    (bin_ / "id").chmod(0o755)
    (bin_ / "nvidia-smi").write_text(text)
    (bin_ / "nvidia-smi").chmod(0o755)
    return bin_


def _run(bin_: Path, script: str) -> subprocess.CompletedProcess:
    env = {"PATH": f"{bin_}:/usr/bin:/bin"}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)


def test_the_boot_step_runs_on_the_sandbox_standin(tmp_path) -> None:
    bin_ = _standin(tmp_path)
    script = _mig_script(2)  # the stand-in here has two GPUs
    done = _run(bin_, script)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = _run(bin_, "nvidia-smi -L").stdout
    assert len(re.findall(r"^  MIG 1g\.10gb +Device +\d: \(UUID: MIG-", listed, re.M)) == 14
    lgi = _run(bin_, "nvidia-smi mig -i 1 -lgi").stdout
    assert re.search(r"MIG 1g\.10gb +19 +13 +6:1 ", lgi), lgi
    # without -i, every GPU's instances (an admin's first look)
    every = _run(bin_, "nvidia-smi mig -lgi").stdout
    assert len(re.findall(r"MIG 1g\.10gb +19 +\d+ +\d:1 ", every)) == 14, every
    assert _run(bin_, "nvidia-smi --query-gpu=mig.mode.current").stdout == "Enabled\nEnabled\n"
    # an eighth 1g instance does not fit a GPU that has seven
    full = _run(bin_, "nvidia-smi mig -i 0 -cgi 1g.10gb -C")
    assert full.returncode != 0 and "Insufficient Resources" in full.stdout
    # the health check agrees with the layout, and drains a node whose instances are gone
    checks = Path("templates/nhc/gpucl.nhc.j2").read_text()
    nhc = f'die() {{ echo "DIE $*"; exit 1; }}\n{checks}\n'
    assert _run(bin_, nhc + "gpucl_check_mig 2 7 && echo ok").stdout == "ok\n"
    _run(bin_, "nvidia-smi mig -i 0 -dgi")
    lost = _run(bin_, nhc + "gpucl_check_mig 2 7").stdout
    assert "DIE 1 gpucl_check_mig: 7 MIG devices, expected 14" in lost


def test_the_boot_step_fails_when_the_driver_numbers_instances_otherwise(tmp_path) -> None:
    bin_ = _standin(tmp_path, gpus=1)
    script = _mig_script(1)
    script = script.replace("'1g.10gb 13 6:1'", "'1g.10gb 14 6:1'")
    done = _run(bin_, script)
    assert done.returncode == 1 and "no 1g.10gb instance 14 at 6:1" in done.stdout


def test_a_gpu_node_gets_every_capability_device_gres_conf_can_name(tmp_path, monkeypatch) -> None:
    from clusterctl.render.slurm_conf import render_slurm
    from clusterctl.sandbox.vm import machine, vmstate

    made: dict[str, int] = {}

    def mknod(path, mode, dev=0):  # a char device needs CAP_MKNOD: record it, make a file
        made[Path(path).name] = dev
        Path(path).touch()

    monkeypatch.setattr(machine.os, "mknod", mknod)
    state = vmstate.VmState(workdir=str(tmp_path), sid="t")
    spec = machine.MachineSpec("gpu-pg0-000001", "gpu", "", "10.40.128.5", "ns", gpus=8)
    caps = {dst: src for src, dst in machine.make_gpu_nodes(state, spec)}["/dev/nvidia-caps"]
    mig, _ = load_stack_spec("azure-h100", [MIG7])
    gres = render_slurm(mig, cloud_site(mig))["gres.conf"]
    named = set(re.findall(r"/dev/nvidia-caps/(nvidia-cap\d+)", gres))
    assert len(named) == 2 * 56 and {p.name for p in caps.iterdir()} >= named
    last = cap_minor(7, 13, 0)
    assert made[f"nvidia-cap{last}"] == os.makedev(machine.CAPS_MAJOR, last)
