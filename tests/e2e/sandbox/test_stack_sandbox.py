"""The azure-h100 stack's own Slurm files and health check, booted on real daemons."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from clusterctl import sandbox
from clusterctl.sandbox import stack as sandbox_flow

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def stack_sandbox(new_workdir, no_trace):
    if os.geteuid() != 0 and not os.environ.get("CI"):
        pytest.skip("the sandbox needs root (CI runs as root)")
    workdir = new_workdir()
    info = sandbox_flow.up("azure-h100", 4, workdir)
    yield workdir, info
    sandbox_flow.down(workdir)
    no_trace(workdir)
    workdir.rmdir()


def sinfo(workdir) -> dict[str, tuple[str, str]]:
    out = sandbox.exec(workdir, ["sinfo", "-h", "-N", "-o", "%N|%T|%E"]).stdout
    return {n: (s, r) for n, s, r in (line.split("|") for line in out.splitlines())}


def test_nodes_idle_with_the_stacks_gres(stack_sandbox) -> None:
    workdir, info = stack_sandbox
    assert info["nodes"] == [f"gpu-pg0-{i}" for i in range(1, 5)]
    nodes = sandbox.node_info(workdir)
    for name in info["nodes"]:
        assert nodes[name]["State"] == "IDLE"
        assert nodes[name]["Gres"] == "gpu:h100:8"
        assert nodes[name]["CPUTot"] == "96"  # posing as ND96isr_H100_v5
    part = sandbox.exec(workdir, ["scontrol", "show", "partition", "gpu", "-o"]).stdout
    assert "Default=YES" in part and "OverSubscribe=EXCLUSIVE" in part


def test_srun_answers_from_four_nodes(stack_sandbox) -> None:
    workdir, info = stack_sandbox
    result = sandbox.exec(workdir, ["srun", "-N4", "hostname"], timeout=60)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == info["nodes"]


def test_rendered_health_check_drains_and_returns_only_our_drains(stack_sandbox) -> None:
    workdir, info = stack_sandbox
    sick, admin = info["nodes"][2], info["nodes"][3]
    sandbox.fail_health_check(workdir, sick, "check_gpu_count: 7 of 8 GPUs", now=True)
    state = sinfo(workdir)
    assert state[sick][0] == "drained"
    assert state[sick][1].startswith("gpucl: check_gpu_count: 7 of 8 GPUs")
    assert all(state[n][0] == "idle" for n in info["nodes"] if n != sick)
    sandbox.exec(
        workdir, ["scontrol", "update", f"nodename={admin}", "state=drain", "reason=admin: swap"]
    )
    sandbox.clear_health_check(workdir, sick)
    assert sandbox.run_health_check(workdir, sick) == 0
    assert sandbox.run_health_check(workdir, admin) == 0
    state = sinfo(workdir)
    assert "drain" not in state[sick][0] and state[sick][1] == "none"
    assert state[admin] == ("drained", "admin: swap")
    sandbox.exec(workdir, ["scontrol", "update", f"nodename={admin}", "state=resume"])


def test_cli_refuses_a_second_sandbox(stack_sandbox) -> None:
    workdir, _ = stack_sandbox
    result = subprocess.run(
        [sys.executable, "-m", "clusterctl", "sandbox", "up", "--workdir", str(workdir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "error:" in result.stderr
    status = subprocess.run(
        [
            sys.executable,
            "-m",
            "clusterctl",
            "sandbox",
            "status",
            "--json",
            "--workdir",
            str(workdir),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(status.stdout)["healthy"] is True
