"""A 4-node sandbox: boot, jobs across nodes, GPUs, ssh, faults. One cluster for the module."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from clusterctl import sandbox
from clusterctl.sandbox import SandboxError

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root"),
]

NODES = ["node1", "node2", "node3", "node4"]


@pytest.fixture(scope="module")
def cluster(render, new_workdir, no_trace):
    workdir = new_workdir()
    site = sandbox.sandbox_site(NODES, workdir)
    sandbox.up(render(site, NODES), NODES, workdir=workdir, site=site, timeout=60)
    yield workdir
    sandbox.down(workdir)
    no_trace(workdir)
    shutil.rmtree(workdir, ignore_errors=True)


def wait_until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.5)


def test_all_nodes_idle_with_eight_h100s(cluster):
    nodes = sandbox.node_info(cluster)
    assert sorted(nodes) == NODES
    for fields in nodes.values():
        assert fields["State"] == "IDLE"
        assert fields["Gres"] == "gpu:h100:8"
        assert fields["CPUTot"] == "4"


def test_srun_answers_from_four_distinct_nodes(cluster):
    proc = sandbox.exec(cluster, ["srun", "-N4", "hostname"], timeout=60, check=True)
    assert sorted(proc.stdout.split()) == NODES


def test_job_gets_its_gpus_and_only_those(cluster):
    script = 'echo "$CUDA_VISIBLE_DEVICES"; cat "$1" 2>/dev/null; echo "denied=$?"'
    gpu7 = f"{cluster}/dev/nvidia7"
    proc = sandbox.exec(
        cluster, ["srun", "-N1", "--gres=gpu:h100:2", "sh", "-c", script, "sh", gpu7], check=True
    )
    visible, denied = proc.stdout.split()
    assert visible == "0,1"
    assert denied != "denied=0"  # ConstrainDevices: an unallocated GPU cannot be opened


def test_ssh_transport_reaches_the_controller(cluster):
    argv = sandbox.ssh_argv(cluster)
    proc = subprocess.run([*argv, "sinfo -h -N -o %N"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == NODES
    no_key = [a for a in argv if not a.startswith(str(cluster))]
    no_key = [*no_key[:-1], "-o", "PreferredAuthentications=password", no_key[-1], "true"]
    refused = subprocess.run(no_key, capture_output=True, text=True, timeout=30)
    assert refused.returncode == 255


def test_sshd_listens_on_the_bridge_address_only(cluster):
    listening = sandbox.exec(cluster, ["ss", "-ltnH"], check=True).stdout
    addrs = {line.split()[3] for line in listening.splitlines() if line.split()[3].endswith(":22")}
    site_addr = sandbox.ssh_argv(cluster)[-1].split("@")[1]
    assert addrs == {f"{site_addr}:22"}


def test_status_reports_daemons_and_sinfo(cluster):
    st = sandbox.status(cluster)
    assert st is not None and st.healthy
    assert {f"slurmd@{n}" for n in NODES} <= set(st.daemons)
    assert "gpu:h100:8" in (st.sinfo or "")


def test_up_refuses_while_running(cluster, render):
    site = sandbox.sandbox_site(NODES, cluster)
    with pytest.raises(SandboxError, match="already runs"):
        sandbox.up(render(site, NODES), NODES, workdir=cluster, site=site)
    assert sandbox.status(cluster).healthy  # the refusal tore nothing down


def _send_seconds(cluster, node: str, nbytes: int) -> float:
    """Time to push `nbytes` through srun's stdin to a task on `node`, over that node's link."""
    start = time.monotonic()
    proc = sandbox.exec(
        cluster, ["srun", "-N1", "-w", node, "wc", "-c"], input="x" * nbytes, check=True
    )
    assert proc.stdout.split() == [str(nbytes)]
    return time.monotonic() - start


def test_slow_link_slows_exactly_that_node(cluster):
    fast = _send_seconds(cluster, "node1", 200_000)
    kind = sandbox.slow_link(cluster, "node2", delay_ms=200, rate="1mbit")
    try:
        slow = _send_seconds(cluster, "node2", 200_000)  # 1.6 Mbit at 1 Mbit/s: over 1.5 s
        other = _send_seconds(cluster, "node1", 200_000)
    finally:
        sandbox.clear_link(cluster, "node2")
    assert kind in ("netem", "tbf")
    assert slow > 1.3 and slow > 3 * fast, (slow, fast)
    assert other < slow / 3
    assert _send_seconds(cluster, "node2", 200_000) < slow / 3


def test_failing_health_check_drains_that_node_and_we_resume_only_ours(cluster):
    sandbox.exec(
        cluster,
        ["scontrol", "update", "nodename=node4", "state=drain", "reason=admin: disk swap"],
        check=True,
    )
    sandbox.fail_health_check(cluster, "node3", "gpu 5 missing")
    try:
        info = wait_until(
            lambda: (i := sandbox.node_info(cluster)) and "DRAIN" in i["node3"]["State"] and i,
            30,
            "the health check to drain node3",
        )
        assert info["node3"]["Reason"] == "gpucl: gpu 5 missing"
        assert all("DRAIN" not in info[n]["State"] for n in ("node1", "node2"))
        sandbox.clear_health_check(cluster, "node3")
        assert sandbox.resume_our_drains(cluster, "gpucl:") == ["node3"]
        # Slurm shows a resumed node NOT_RESPONDING until its next ping answers (about 1 s).
        wait_until(lambda: sandbox.node_info(cluster)["node3"]["State"] == "IDLE", 15, "resume")
        info = sandbox.node_info(cluster)
        assert "DRAIN" in info["node4"]["State"]
        assert info["node4"]["Reason"] == "admin: disk swap"
    finally:
        sandbox.clear_health_check(cluster, "node3")
        sandbox.exec(cluster, ["scontrol", "update", "nodename=node4", "state=resume"])
        wait_until(lambda: sandbox.node_info(cluster)["node4"]["State"] == "IDLE", 15, "resume")


def test_killed_slurmd_shows_not_responding(cluster):
    # Last in the module: the node stays down.
    wait_until(lambda: sandbox.node_info(cluster)["node4"]["State"] == "IDLE", 15, "node4 idle")
    sandbox.kill_slurmd(cluster, "node4")
    wait_until(
        lambda: "NOT_RESPONDING" in sandbox.node_info(cluster)["node4"]["State"],
        40,
        "node4 to be marked not responding",
    )
    assert not sandbox.status(cluster).daemons["slurmd@node4"]
    others = sandbox.node_info(cluster)
    assert all(others[n]["State"] == "IDLE" for n in ("node1", "node2", "node3"))
