"""`clusterctl validate --nccl --sandbox` against the VM sandbox, as against the cloud: ssh as the
admin user to the scheduler (through the lab, as through a bastion), sudo for scontrol, Slurm jobs
running the stdlib ring probe (the declared stand-in for nccl-tests) on nodes built by their
user-data; a slowed link is found, drained, re-tested and returned. Root only."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot, faults, vmstate
from clusterctl.sandbox.vm import lab as lab_mod
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[3]
SLURM = ["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-3", "gpu-pg0-4"]
SLOW_HOST, SLOW = "gpu-pg0-000002", "gpu-pg0-3"  # Azure's hostname, Slurm's name
HEALTH = "/usr/local/libexec/gpu-clusters/gpucl-health.sh"
SLOW_HOST_TRAIN, SLOW_TRAIN = "gpu-pg0-000001", "gpu-pg0-2"  # the second of the 2 trained on


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with booted_stack(tmp_path_factory, nodes=4) as (specs, workdir, _):
        yield specs, workdir


def validate(workdir: Path, *args: str, timeout: float = 500) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "clusterctl", "validate", "--nccl",
            "--sandbox-dir", str(workdir), *args]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def node_state(workdir: Path, name: str) -> tuple[str, str]:
    out = boot.run(workdir, "h100-scheduler", ["sinfo", "-h", "-N", "-n", name, "-o", "%T|%E"])
    state, _, reason = out.stdout.strip().partition("|")
    return state, reason


def test_healthy_vm_sandbox_passes(cluster):
    _, workdir = cluster
    proc = validate(workdir, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "pass"
    group = data["groups"][0]
    assert group["hosts"] == SLURM and group["n_ranks"] == 4
    assert group["thresholds"]["source"].startswith("calibrated on this cluster")
    assert data["sweep"]["suspects"] == [] and data["drained"] == []
    # every host's fabric judged as the cloud's: ND H100 v5's 8 HCAs with GPUDirect RDMA
    assert group["fabric_expected"]["devices"] == 8 and group["fabric_expected"]["gdr"] is True
    fabric = {f["host"]: (f["device_count"], f["gdr"]) for f in group["fabric"]}
    assert fabric == {name: (8, True) for name in SLURM}, group["fabric"]
    # the all-node run once more with NCCL_ALGO unset: the probe has no catalog figure for it,
    # so it is reported, not judged, and says why
    assert group["algorithm"] == "Ring"
    default = data["default_algorithm"]
    assert (default["algorithm"], default["judged"], default["status"]) == (
        "default", False, "not judged")  # fmt: skip
    assert "no catalog SKU" in default["why_not"] and default["measured_busbw_gbps"] > 0


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "clusterctl", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)  # fmt: skip


@pytest.mark.parametrize(("fault", "device", "said"), [
    ("drop-hca", "mlx5_ib5", f"{SLOW}: 7 of 8 IB devices, mlx5_ib5 missing"),
    ("no-gdr", None, f"{SLOW}: no GPUDirect RDMA"),
])  # fmt: skip
def test_one_node_short_of_its_fabric_fails_validate_naming_it(cluster, fault, device, said):
    """One HCA of eight gone (or GPUDirect RDMA off) on one node, through `sandbox
    fault` as a user types it; the probe says each node's devices as NCCL does, and the judge
    names that node and what it lacks, whatever the bandwidth."""
    _, workdir = cluster
    args = ["sandbox", "fault", SLOW_HOST, fault, "--workdir", str(workdir)]
    injected = cli(*args, *(["--device", device] if device else []))
    assert injected.returncode == 0, injected.stderr
    try:
        proc = validate(workdir, "--json")
    finally:
        cleared = cli("sandbox", "fault", SLOW_HOST, "clear", "--workdir", str(workdir))
    assert cleared.returncode == 0, cleared.stderr
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    reasons = [r for g in data["groups"] for r in g.get("reasons", [])]
    assert any(said in r for r in reasons), reasons
    assert not any(n in r for r in reasons for n in SLURM if n != SLOW and "missing" in r)
    assert data["drained"] == []


def test_slow_link_is_found_drained_kept_by_the_health_check_and_resumed(cluster):
    _, workdir = cluster
    faults.inject(workdir, SLOW_HOST, "slow-link", rate="4mbit")
    try:
        proc = validate(workdir, "--drain", "--json")
    finally:
        faults.clear(workdir, SLOW_HOST)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert {s["node"]: s["status"] for s in data["sweep"]["suspects"]} == {SLOW: "bad"}
    assert data["drained"] == [SLOW]
    state, reason = node_state(workdir, SLOW)
    assert "drain" in state and reason.startswith("gpucl-nccl: busbw"), (state, reason)
    assert all("drain" not in node_state(workdir, n)[0] for n in SLURM if n != SLOW)
    # The node's own health check passes (its link is fine now) but never resumes validate's drain.
    boot.run(workdir, SLOW_HOST, ["env", f"SLURMD_NODENAME={SLOW}", HEALTH])
    assert node_state(workdir, SLOW)[1].startswith("gpucl-nccl:")
    back = validate(workdir, "--resume", SLOW)
    assert back.returncode == 0, back.stderr + back.stdout
    assert f"{SLOW}: back in service" in back.stdout
    assert "drain" not in node_state(workdir, SLOW)[0]
    res = boot.run(workdir, "h100-scheduler", ["scontrol", "show", "res"]).stdout
    assert "gpucl-recheck" not in res


def test_a_slow_pair_the_floor_passes_is_rerun_and_named_by_the_peer_check(cluster):
    """With --fail-below far under any figure the floor passes every pair, so only the peer check
    can name the slowed node's pair: below the probe's 0.25 of the other pair, re-run once as a
    Slurm job of its own, and named because the re-run agrees."""
    _, workdir = cluster
    faults.inject(workdir, SLOW_HOST, "slow-link", rate="4mbit")
    try:
        proc = validate(workdir, "--fail-below", "0.000001", "--json")
    finally:
        faults.clear(workdir, SLOW_HOST)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["sweep"]["suspects"] == [] and data["drained"] == []
    (pair,) = data["sweep"]["peer_suspects"]
    assert SLOW in pair["pair"] and pair["verdict"] == "named", pair
    assert pair["rel_floor"] == 0.25 and pair["rerun_gbps"] is not None
    assert pair["rerun_gbps"] < 0.25 * pair["peer_median_gbps"]


def test_resume_refuses_a_node_validate_did_not_drain(cluster):
    _, workdir = cluster
    sched = "h100-scheduler"
    boot.run(workdir, sched, ["scontrol", "update", "nodename=gpu-pg0-2", "state=drain",
                              "reason=admin: maintenance"])  # fmt: skip
    try:
        proc = validate(workdir, "--resume", "gpu-pg0-2")
        assert proc.returncode == 2 and "not drained by validate" in proc.stderr, proc.stderr
        assert node_state(workdir, "gpu-pg0-2")[1] == "admin: maintenance"
    finally:
        boot.run(workdir, sched, ["scontrol", "update", "nodename=gpu-pg0-2", "state=resume"])


def test_unreachable_scheduler_is_inconclusive_with_one_line(cluster):
    """Exit 3: validate ran but proved nothing (2 is a usage error)."""
    _, workdir = cluster
    state = vmstate.load(workdir)
    info = state.nodes["h100-scheduler"]
    ns, dev = lab_mod.link_of(lab_mod.Lab(state.sid), info["index"], "h100-scheduler")
    subprocess.run(["ip", "-n", ns, "link", "set", dev, "down"], check=True)
    try:
        start = time.monotonic()
        proc = validate(workdir, timeout=90)
    finally:
        subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
    assert proc.returncode == 3, proc.stderr
    assert time.monotonic() - start < 60
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and "connecting" not in ln]
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach azureuser@"), proc.stderr


def sched_sh(workdir: Path, cmd: str, node: str = "h100-scheduler", timeout: float = 120):
    return boot.run(workdir, node, ["sh", "-c", cmd], timeout=timeout)


def test_the_fast_tier_benchmark_runs_on_a_booted_node(cluster):
    """`benchmarks/health_fast_tier.py` (docs/benchmarks.md), one run, on this module's sandbox: it
    prints the fast tier's time as a share of slurmd's 60 s budget (the numbers come from running
    it as written)."""
    _, workdir = cluster
    proc = subprocess.run(
        [sys.executable, "benchmarks/health_fast_tier.py", "--runs", "1",
         "--workdir", str(workdir)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"health .* ms .*% of slurmd's 60 s", proc.stdout), proc.stdout


def test_the_deep_tier_skips_a_busy_node_and_drains_a_failing_one_for_good(cluster):
    """The deep tier never runs beside a job; a deep failure drains with its own
    prefix, which the fast tier's next pass leaves alone. The timer's service is started by hand
    (the interval is 24 h): what the timer would do at its next elapse."""
    _, workdir = cluster
    busy, host, bad = "gpu-pg0-1", "gpu-pg0-000000", ("gpu-pg0-000001", "gpu-pg0-2")
    dcgm_bad = ("gpu-pg0-000002", "gpu-pg0-3")  # Azure's checks pass, DCGM's diagnostic fails
    unit = "gpucl-deep-health.timer"
    timer = sched_sh(workdir, f"systemctl is-enabled {unit}; systemctl cat {unit}")
    assert timer.stdout.startswith("enabled") and "OnUnitActiveSec=24h" in timer.stdout, (
        timer.stdout
    )
    job = sched_sh(workdir, f"sbatch --parsable -N1 -w {busy} --time=10 --wrap 'sleep 600'")
    job_id = job.stdout.strip().split(";")[0]
    faults.inject(workdir, bad[0], "fail-deep")
    faults.inject(workdir, dcgm_bad[0], "fail-dcgm")
    try:
        deadline = time.monotonic() + 90
        # the busy node runs its job; the others answer slurmctld (an `idle*` node, not
        # responding after the earlier faults, would rightly be skipped)
        while [node_state(workdir, n)[0] for n in SLURM] != ["allocated", "idle", "idle", "idle"]:
            assert time.monotonic() < deadline, [node_state(workdir, n) for n in SLURM]
            time.sleep(1)
        run = sched_sh(workdir, "systemctl start gpucl-deep-health.service && "
                                "cat /var/log/slurm/gpucl-deep.log")  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert f"{busy} skipped: allocated (job {job_id})" in run.stdout, run.stdout
        deadline = time.monotonic() + 120
        while sched_sh(workdir, "squeue -h -n gpucl-deep -o %i").stdout.strip():
            assert time.monotonic() < deadline, "deep-check jobs still queued"
            time.sleep(2)
        for node in ("gpu-pg0-2", "gpu-pg0-3", "gpu-pg0-4"):
            assert f"{node}: deep check submitted as job" in run.stdout, run.stdout
        ran = sched_sh(workdir, "cat /var/log/slurm/gpucl-deep-*.out 2>/dev/null", node=host)
        assert ran.stdout == "", ran.stdout  # nothing ran on the busy node
        out = sched_sh(workdir, "cat /var/log/slurm/gpucl-deep-*.out", node="gpu-pg0-000003")
        assert "check_nccl_allreduce 460.0 1 16G" in out.stdout, out
        assert "dcgm diag level 2 passed" in out.stdout and "gpu-pg0-4 passed" in out.stdout, out
        state, reason = node_state(workdir, bad[1])
        assert state == "drained", (state, reason)
        assert reason.startswith("gpucl-deep: check_nccl_allreduce"), reason
        assert node_state(workdir, dcgm_bad[1]) == (
            "drained",
            "gpucl-deep: dcgm diag level 2 failed: memory",
        ), node_state(workdir, dcgm_bad[1])
        assert node_state(workdir, "gpu-pg0-4")[0] == "idle", node_state(workdir, "gpu-pg0-4")
        # the fast tier passes on that node and still leaves the deep drain alone
        fast = sched_sh(workdir, HEALTH, node=bad[0])
        assert fast.returncode == 0, fast.stderr
        assert node_state(workdir, bad[1]) == (state, reason)
    finally:
        sched_sh(workdir, f"scancel {job_id}")
        for vm, slurm_name in (bad, dcgm_bad):
            faults.clear(workdir, vm)
            sched_sh(workdir, f"scontrol update NodeName={slurm_name} State=RESUME")


def train(workdir: Path, *args: str, env: dict | None = None, timeout: float = 600):
    argv = [sys.executable, "-m", "clusterctl", "validate", "--train",
            "--sandbox-dir", str(workdir), "--nodes", "2", "--json", *args]  # fmt: skip
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_train_runs_ddp_across_nodes_then_names_a_slow_node_against_the_kept_floor(
    cluster, tmp_path
):
    """srun -> torchrun on every node -> DDP (gloo on CPU, the declared stand-in for
    the GPU container): a 1-node reference, then 2 nodes; kept in the history, the first passing
    run is the floor of the next, where a node slowed by `slow-gpu` is named as the straggler."""
    _, workdir = cluster
    env = {"GPU_CLUSTERS_VALIDATE_HISTORY": str(tmp_path / "history.sqlite")}
    # --record names a stack of the project (cwd=ROOT); the history file is this test's own
    first = train(workdir, "--record", "azure-h100", env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    data = json.loads(first.stdout)
    assert data["status"] == "pass" and data["stragglers"] == [] and data["failures"] == []
    assert (data["metrics"]["nodes"], data["metrics"]["gpus"]) == (2, 2)
    assert data["single_node"]["nodes"] == 1 and data["scaling"] > 0
    assert data["floor"]["source"].startswith("no floor yet: calibrating")
    # nothing of the job is left on the cluster: program, scripts and outputs removed
    left = sched_sh(workdir, "ls -A /home/azureuser | grep clusterctl-validate || true")
    assert left.stdout.strip() == "", left.stdout
    faults.inject(workdir, SLOW_HOST_TRAIN, "slow-gpu")
    try:
        slow = train(workdir, "--record", "azure-h100", "--no-scaling", env=env)
    finally:
        faults.clear(workdir, SLOW_HOST_TRAIN)
    assert slow.returncode == 1, slow.stdout + slow.stderr
    data = json.loads(slow.stdout)
    assert [s["node"] for s in data["stragglers"]] == [SLOW_TRAIN]
    assert data["stragglers"][0]["ratio"] >= 1.5 and data["bad_nodes"] == [SLOW_TRAIN]
    assert data["floor"]["source"].startswith("calibrated: 80% of run #1")
    assert any("below the floor" in r for r in data["reasons"])


def test_a_killed_slurmd_ends_validate_within_minutes_naming_the_node(cluster):
    """A killed slurmd once kept `validate --nccl --sandbox` running 37 min. Last in the
    module: the node may be left DOWN (ReturnToService=2 brings it back once slurmd answers)."""
    _, workdir = cluster
    faults.inject(workdir, "gpu-pg0-000003", "kill-slurmd")
    try:
        start = time.monotonic()
        proc = validate(workdir, timeout=600)
        took = time.monotonic() - start
    finally:
        faults.clear(workdir, "gpu-pg0-000003")
    assert proc.returncode in (1, 3), proc.stdout + proc.stderr  # a failure, or inconclusive
    assert "gpu-pg0-4" in proc.stdout + proc.stderr
    assert took < 300, took


def test_a_node_killed_mid_training_ends_the_run_within_minutes_naming_it(cluster):
    """A node crashing (its whole OS killed, as a VM's host fails) while the training
    runs ends `validate --train` with exit 1 naming it. Last: the node stays down."""
    _, workdir = cluster
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterctl", "validate", "--train", "--sandbox-dir",
         str(workdir), "--nodes", "2", "--no-scaling", "--steps", "400", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while "clusterctl-train RUNNING" not in sched_sh(workdir, "squeue -h -o '%j %T'").stdout:
            assert time.monotonic() < deadline and proc.poll() is None, "the job never ran"
            time.sleep(1)
        time.sleep(12)  # torch imported, the rendezvous formed: the steps are running
        assert proc.poll() is None
        os.kill(vmstate.load(workdir.resolve()).nodes[SLOW_HOST_TRAIN]["init"], signal.SIGKILL)
        killed = time.monotonic()
        stdout, stderr = proc.communicate(timeout=400)
        took = time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stdout + stderr
    data = json.loads(stdout)
    assert data["bad_nodes"] == [SLOW_TRAIN], data
    assert data["failures"][0]["kind"] == "lost"
    assert took < 240, took
    print(f"killed node named after {took:.0f} s")
    # cancelled: not pending or running (it may stay COMPLETING until Slurm declares the node down)
    assert "clusterctl-train" not in sched_sh(workdir, "squeue -h -t PD,R -o '%j'").stdout
