"""`clusterctl sandbox vm up/status/exec/reboot/down` as a user runs them (root only)."""

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
        [sys.executable, "-m", "clusterctl", "sandbox", "vm", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def test_vm_cli_up_exec_down(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the VM sandbox needs root")
    workdir = tmp_path / "vm"
    try:
        up = cli("up", "-s", "azure-h100", "--nodes", "1", "--workdir", str(workdir))
        assert up.returncode in (0, 1), up.stderr
        assert "sandbox up in" in up.stdout
        problems = [line for line in up.stdout.splitlines() if line.startswith("problem:")]
        # each reported problem names a node and a stage
        assert all(line.count(":") >= 3 for line in problems), problems
        status = cli("status", "--workdir", str(workdir))
        assert status.returncode == 0 and "(scheduler," in status.stdout, status.stdout
        sinfo = cli("exec", "--workdir", str(workdir), "--", "sinfo", "-h", "-o", "%N")
        assert sinfo.returncode == 0 and sinfo.stdout.strip() == "gpu-pg0-1", sinfo
        node = next(line.split()[0] for line in status.stdout.splitlines() if "(gpu," in line)
        boot = cli("reboot", node, "--workdir", str(workdir))
        assert boot.returncode == 0, boot.stderr
        again = cli("exec", "--workdir", str(workdir), "--node", node, "--", "hostname")
        assert again.stdout.strip() == "gpu-pg0-1"
    finally:
        down = cli("down", "--workdir", str(workdir))
    assert down.returncode == 0, down.stderr
    assert report.leftovers(workdir) == []
    assert cli("status", "--workdir", str(workdir)).returncode == 1
