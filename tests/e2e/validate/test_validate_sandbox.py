"""`clusterctl validate --nccl --sandbox` end to end: ssh to the sandbox controller, a Slurm job
running the TCP all-reduce probe on every node, parse, judge against a floor calibrated on the
sandbox itself, localise, drain in the real slurmctld. Needs root (network namespaces)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from clusterctl import sandbox
from clusterctl.sandbox import netns
from clusterctl.sandbox.state import load
from tests.e2e.sandbox.conftest import assert_no_trace, make_workdir, slurm_files

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root"),
]

NODES = ["node1", "node2", "node3", "node4"]


@pytest.fixture(scope="module")
def cluster():
    workdir = make_workdir()
    site = sandbox.sandbox_site(NODES, workdir)
    sandbox.up(slurm_files(site, NODES), NODES, workdir=workdir, site=site, timeout=60)
    yield workdir
    sandbox.down(workdir)
    assert_no_trace(workdir)
    shutil.rmtree(workdir, ignore_errors=True)


def validate(workdir, *args: str, timeout: float = 500) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "clusterctl", "validate", "--nccl",
            "--sandbox-dir", str(workdir), *args]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def test_healthy_sandbox_passes(cluster):
    proc = validate(cluster, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "pass"
    group = data["groups"][0]
    assert group["hosts"] == NODES and group["n_ranks"] == 4
    assert group["thresholds"]["source"].startswith("calibrated on this cluster")
    assert data["sweep"]["suspects"] == [] and data["drained"] == []


def test_slow_link_fails_names_the_node_and_drain_drains_it(cluster):
    sandbox.slow_link(cluster, "node3", delay_ms=30, rate="20mbit")
    try:
        proc = validate(cluster, "--drain", "--json")
    finally:
        sandbox.clear_link(cluster, "node3")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "fail"
    suspects = {s["node"]: s["status"] for s in data["sweep"]["suspects"]}
    assert suspects == {"node3": "bad"}
    assert data["sweep"]["rounds"] <= 3 and data["drained"] == ["node3"]
    info = sandbox.node_info(cluster)
    assert "DRAIN" in info["node3"]["State"]
    assert info["node3"]["Reason"].startswith("gpucl-nccl: busbw")
    assert all("DRAIN" not in info[n]["State"] for n in ("node1", "node2", "node4"))

    # Still slow: --resume re-tests it in a reservation and drains it again.
    sandbox.slow_link(cluster, "node3", delay_ms=30, rate="20mbit")
    try:
        again = validate(cluster, "--resume", "node3")
    finally:
        sandbox.clear_link(cluster, "node3")
    assert again.returncode == 1, again.stderr
    assert "node3: still failing, drained again" in again.stdout
    info = sandbox.node_info(cluster)
    assert "DRAIN" in info["node3"]["State"] and "recheck" in info["node3"]["Reason"]
    # Fixed: the recheck passes and the node is back; no reservation is left.
    back = validate(cluster, "--resume", "node3")
    assert back.returncode == 0, back.stderr + back.stdout
    assert "node3: back in service" in back.stdout
    assert "DRAIN" not in sandbox.node_info(cluster)["node3"]["State"]
    assert "gpucl-recheck" not in sandbox.exec(cluster, ["scontrol", "show", "res"]).stdout


def test_resume_refuses_a_node_validate_did_not_drain(cluster):
    sandbox.exec(cluster, ["scontrol", "update", "nodename=node2", "state=drain",
                           "reason=admin: maintenance"], check=True)  # fmt: skip
    try:
        proc = validate(cluster, "--resume", "node2")
        assert proc.returncode == 2 and "not drained by validate" in proc.stderr
        assert sandbox.node_info(cluster)["node2"]["Reason"] == "admin: maintenance"
    finally:
        sandbox.exec(cluster, ["scontrol", "update", "nodename=node2", "state=resume"])


def test_unreachable_controller_exits_2_with_one_line(cluster):
    state = load(cluster)
    veth = netns.pod_veth(state, state.controller)
    subprocess.run(["ip", "link", "set", veth, "down"], check=True)
    try:
        start = time.monotonic()
        proc = validate(cluster, timeout=60)
    finally:
        subprocess.run(["ip", "link", "set", veth, "up"], check=True)
    assert proc.returncode == 2
    assert time.monotonic() - start < 30
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and "connecting" not in ln]
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach root@"), proc.stderr
