"""azure-gb200's Slurm files under a real slurmctld: the sandbox image's Debian Slurm 24.11.

The GB200 nodes are arm64 and cannot boot here (substitutions.cannot_boot says why), but the
controller's side of the cluster can be checked by the program that consumes it: slurmctld reads
topology/block's NVL72 block and the 4 gb200 GPUs per node, and runs as the primary controller.
The daemon runs in a chroot of the node image (an overlay, so the cache is untouched) for as long
as it takes to say so; root only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import image
from tests.e2e.vm.conftest import need_sandbox

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[3]
DEBS = ("slurmctld", "libslurm42t64", "slurm-wlm-basic-plugins", "libmunge2", "munge")
SLURM_UID, MUNGE_UID = 11100, 11101  # render/paths.py SERVICE_IDS
# What this chroot lacks and the scheduler VM has, said by slurmctld as errors: the PMIx plugin's
# hwloc library (not in these debs), state files (a first start), the power programs (cloud-init
# writes them).
EXPECTED = ("mpi_pmix", "mpi/pmix", "MPI: Cannot create context", "state file", "Trying backup",
            "power_save")  # fmt: skip


def _start(argv: list[str], log: Path) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


def test_slurmctld_24_11_runs_the_gb200_cluster_with_its_nvl72_block(tmp_path: Path) -> None:
    need_sandbox()
    img = image.build(log=lambda _m: None)
    plan = tmp_path / "plan"
    subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-gb200", "--out", str(plan)],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    upper, work, root = tmp_path / "upper", tmp_path / "work", tmp_path / "root"
    for d in (upper, work, root):
        d.mkdir()
    overlay = f"lowerdir={img.rootfs},upperdir={upper},workdir={work}"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", overlay, str(root)], check=True)
    procs: list[subprocess.Popen] = []
    try:
        for name in DEBS:
            (deb,) = sorted(img.debs.glob(f"{name}_*.deb"))[:1]
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        ctld = root / "usr/sbin/slurmctld"
        if not ctld.exists():  # Debian installs slurmctld-wlm and an alternatives link
            ctld.symlink_to("slurmctld-wlm")
        with (root / "etc/passwd").open("a") as f:
            f.write(f"slurm:x:{SLURM_UID}:{SLURM_UID}::/nonexistent:/usr/sbin/nologin\n")
            f.write(f"munge:x:{MUNGE_UID}:{MUNGE_UID}::/nonexistent:/usr/sbin/nologin\n")
        with (root / "etc/group").open("a") as f:
            f.write(f"slurm:x:{SLURM_UID}:\nmunge:x:{MUNGE_UID}:\n")
        for rel, uid in (("etc/munge", MUNGE_UID), ("run/munge", MUNGE_UID),
                         ("var/lib/munge", MUNGE_UID), ("var/log/munge", MUNGE_UID),
                         ("shared/spool/slurmctld", SLURM_UID), ("var/log/slurm", SLURM_UID),
                         ("run/slurm", SLURM_UID), ("etc/slurm", 0)):  # fmt: skip
            (root / rel).mkdir(parents=True, exist_ok=True)
            os.chown(root / rel, uid, uid)
        key = root / "etc/munge/munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        os.chown(key, MUNGE_UID, MUNGE_UID)
        for conf in (plan / "slurm").glob("*.conf"):
            (root / "etc/slurm" / conf.name).write_text(conf.read_text())
        conf = (root / "etc/slurm/slurm.conf").read_text()
        (host,) = [x.split("=", 1)[1] for x in conf.splitlines() if x.startswith("SlurmctldHost=")]
        procs.append(_start(["chroot", str(root), "/usr/sbin/munged", "-F", "--force"],
                            tmp_path / "munged.out"))  # fmt: skip
        ctld_argv = f"hostname {host} && exec chroot {root} /usr/sbin/slurmctld -D -vv"
        procs.append(_start(["unshare", "-u", "sh", "-c", ctld_argv], tmp_path / "slurmctld.out"))
        log = root / "var/log/slurm/slurmctld.log"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and procs[-1].poll() is None:
            if log.exists() and "Running as primary controller" in log.read_text():
                break
            time.sleep(0.5)
        text = log.read_text() if log.exists() else (tmp_path / "slurmctld.out").read_text()
    finally:
        for proc in reversed(procs):
            _stop(proc)
        subprocess.run(["umount", str(root)], check=True)
    assert "Running as primary controller" in text, text[-3000:]
    assert "topology/block: init: topology block plugin loaded" in text
    assert "Block name:gpu-pg0-nvl0 nodes:gpu-pg0-[1-18]" in text
    assert "Gres Name=gpu Type=gb200 Count=4" in text
    errors = [x for x in text.splitlines() if " error: " in x or " fatal: " in x]
    unexpected = [x for x in errors if not any(e in x for e in EXPECTED)]
    assert unexpected == [], unexpected
