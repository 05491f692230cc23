"""`clusterctl sandbox up/status/exec/reboot/down` as a user runs them (root only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import report

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", "sandbox", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def test_vm_cli_up_exec_down(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the VM sandbox needs root")
    workdir = tmp_path / "vm"
    try:
        up = cli("up", "-s", "azure-h100", "--nodes", "1", "--workdir", str(workdir))
        problems = [line for line in up.stdout.splitlines() if line.startswith("problem:")]
        assert up.returncode == 0 and "sandbox up in" in up.stdout, problems or up.stderr
        status = cli("status", "--workdir", str(workdir))
        assert status.returncode == 0 and "(scheduler," in status.stdout, status.stdout
        sinfo = cli("exec", "--workdir", str(workdir), "--", "sinfo", "-h", "-o", "%N")
        assert sinfo.returncode == 0 and sinfo.stdout.strip() == "gpu-pg0-1", sinfo
        node = next(line.split()[0] for line in status.stdout.splitlines() if "(gpu," in line)
        _faults(workdir, node)
        boot = cli("reboot", node, "--workdir", str(workdir))
        assert boot.returncode == 0, boot.stderr
        again = cli("exec", "--workdir", str(workdir), "--node", node, "--", "hostname")
        assert again.stdout.strip() == "gpu-pg0-1"
    finally:
        down = cli("down", "--workdir", str(workdir))
    assert down.returncode == 0, down.stderr
    assert report.leftovers(workdir) == []
    assert cli("status", "--workdir", str(workdir)).returncode == 1


def _faults(workdir: Path, node: str) -> None:
    """`fault` injects what it says inside the node, and `clear` undoes all of it."""

    def on_node(*argv: str) -> subprocess.CompletedProcess[str]:
        return cli("exec", "--workdir", str(workdir), "--node", node, "--", *argv)

    def gpus() -> int:
        return len(on_node("nvidia-smi", "--list-gpus").stdout.splitlines())

    bad = cli("fault", node, "melt", "--workdir", str(workdir))
    assert bad.returncode == 2 and "FAULT" in bad.stderr, bad
    assert cli("fault", "no-such-node", "kill-slurmd", "--workdir", str(workdir)).returncode == 2

    def fetch_s() -> float:  # 284 kB from the lab server, through the node's link
        url = "http://sandbox-mirror/debian/dists/sandbox/main/binary-amd64/Packages"
        got = on_node("curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", url)
        return float(got.stdout)

    assert gpus() == 8
    fast = fetch_s()
    for kind in ("kill-slurmd", "fail-health", "slow-link"):
        done = cli("fault", node, kind, "--rate", "1mbit", "--workdir", str(workdir))
        assert done.returncode == 0, done.stderr
    slow = fetch_s()
    assert slow > 1.5 and slow > 10 * fast, (fast, slow)  # 2.3 Mbit at 1 Mbit/s: about 2.3 s
    assert on_node("systemctl", "is-active", "slurmd").stdout.strip() != "active"
    assert gpus() == 7
    health = on_node("/usr/sbin/nhc", "-c", "/etc/nhc/gpucl-fast.conf", "MARK_OFFLINE=0")
    assert health.returncode != 0 and "7 of 8 GPUs" in health.stdout, health
    cleared = cli("fault", node, "clear", "--workdir", str(workdir))
    assert cleared.returncode == 0 and "fail-health" in cleared.stdout, cleared
    assert on_node("systemctl", "is-active", "slurmd").stdout.strip() == "active"
    assert gpus() == 8
    assert fetch_s() < 1.0
