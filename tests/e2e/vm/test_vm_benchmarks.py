"""`benchmarks/sandbox_vm_boot.py` (docs/benchmarks.md), one small run (1 GPU node, cached image,
one boot): it boots, reaches idle, goes down and prints its table row (with a GPU node's first-boot
CPU seconds). Root only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.vm.conftest import need_sandbox

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[3]


def test_the_boot_benchmark_runs() -> None:
    need_sandbox()
    proc = subprocess.run(
        [sys.executable, "benchmarks/sandbox_vm_boot.py", "--runs", "1", "--nodes", "1",
         "--image-runs", "0", "--idle", "1"],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line.strip().startswith("1+1 ")]
    assert len(rows) == 1, proc.stdout
    assert len(rows[0]) == 12 and all(float(x) >= 0 for x in rows[0][1:]), rows
    assert float(rows[0][7]) > 0, rows  # cpu/gpu s: a GPU node's first boot, measured
