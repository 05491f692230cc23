"""`clusterctl` as a user runs it: the real app in-process (fast), or a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
NCCL_DATA = ROOT / "tests" / "data" / "nccl"
H100_LOG = NCCL_DATA / "nccl_tests_issue309_h100_2node.txt"  # 2 hosts in its `# Rank` lines
H100 = "Standard_ND96isr_H100_v5"


@pytest.fixture
def cli():
    """Invoke the main app in-process; the result has exit_code, stdout and stderr."""
    from clusterctl.cli import app

    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args), env={"COLUMNS": "200"})

    return invoke


def run_cli(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m clusterctl ARGS` in a fresh interpreter, this checkout's code first."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **env}
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", *args],
        capture_output=True, text=True, cwd=cwd, env=environ, timeout=180,
    )  # fmt: skip


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]
