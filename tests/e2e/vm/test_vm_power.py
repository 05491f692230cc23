"""Slurm's own power saving drives the VM sandbox's nodes: the rendered ResumeProgram,
SuspendProgram and gpucl-power run on the scheduler as slurmctld calls them; the sandbox's power
stand-in starts and stops node containers for the Azure calls (substitution power-api), and the
times are scaled to seconds (substitution time-scale). Root only.

Proves: idle nodes power down (idle~, their VMs stopped); a job powers a node up and runs; a node
whose start fails is DOWN with the cause and its job runs on another node; so is one that starts
but never registers, once ResumeTimeout passes; a spot eviction notice
drains the node, requeues its job and deallocates it, which then returns as an ordinary
powered-down node."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot, power, substitutions
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[3]

SUSPEND_S, SUSPEND_TIMEOUT_S, RESUME_TIMEOUT_S = 20, 10, 100
HOSTS = {"gpu-pg0-1": "gpu-pg0-000000", "gpu-pg0-2": "gpu-pg0-000001"}  # Slurm -> Azure hostname


@dataclass
class Cluster:
    workdir: Path
    scheduler: str
    vms: dict[str, str]
    """Slurm name -> VM name (<scale set>_<instance id>)."""
    scheduler_vm: str = ""

    def sh(self, cmd: str, node: str | None = None, timeout: float = 120):
        return boot.run(self.workdir, node or self.scheduler, ["sh", "-c", cmd], timeout=timeout)

    def state(self, node: str) -> str:
        return self.sh(f"sinfo -h -N -n {node} -o %T").stdout.strip()

    def reason(self, node: str) -> str:
        return self.sh(f"sinfo -h -N -n {node} -o %E").stdout.strip()

    def vm_power(self, node: str) -> str:
        got = power.act(self.workdir, "state", [self.vms[node]])
        return got[self.vms[node]]["power"]

    def job(self, job_id: str) -> dict[str, str]:
        text = self.sh(f"scontrol show job {job_id} -o").stdout
        return dict(re.findall(r"(\w+)=(\S*)", text))

    def fault(self, node: str, kind: str) -> None:
        argv = [sys.executable, "-m", "clusterctl", "sandbox", "fault", node, kind,
                "--workdir", str(self.workdir)]  # fmt: skip
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    def sbatch(self, *args: str) -> str:
        proc = self.sh("sbatch --parsable " + " ".join(args))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip().split(";")[0]


def wait_for(what: str, probe: Callable[[], object], ok: Callable[[object], bool], timeout: float):
    deadline = time.monotonic() + timeout
    seen = probe()
    while not ok(seen):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s; last seen {seen!r}")
        time.sleep(2)
        seen = probe()
    return seen


def scale_time(c: Cluster, first: bool = False) -> None:
    """The time-scale substitution, on the rendered defaults."""
    if first:
        assert c.sh("grep -q '^SuspendTime=900$' /etc/slurm/slurm.conf").returncode == 0
    power.time_scale(c.workdir, c.scheduler, SUSPEND_S, SUSPEND_TIMEOUT_S, RESUME_TIMEOUT_S)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with booted_stack(tmp_path_factory, nodes=2) as (specs, workdir, reports):
        assert all(r["cloud_init"] == "done" for r in reports.values()), reports
        sched = next(s.name for s in specs if s.role == "scheduler")
        by_host = {s.name: s.vm_name for s in specs if s.role == "gpu"}
        sched_vm = next(s.vm_name for s in specs if s.role == "scheduler")
        c = Cluster(
            workdir, sched, {slurm: by_host[host] for slurm, host in HOSTS.items()}, sched_vm
        )
        wait_for("both nodes registered", lambda: [c.state(n) for n in HOSTS],
                 lambda s: s == ["idle", "idle"], 120)  # fmt: skip
        try:
            scale_time(c, first=True)
            yield c
        finally:
            keep_logs(c)


def keep_logs(c: Cluster) -> None:
    """Slurm's and the power program's logs, and each running node's journal, into the workdir's
    logs/ (which `down` keeps) for a failure's post-mortem."""
    for node, info in boot.status(c.workdir).items():
        if not info["running"]:
            continue
        out = c.workdir / "logs" / node
        out.mkdir(parents=True, exist_ok=True)
        logs = c.sh("tail -n 400 /var/log/slurm/*.log", node).stdout
        (out / "slurm-logs.txt").write_text(logs)
        (out / "journal-end.txt").write_text(c.sh("journalctl -b --no-pager", node).stdout)


def test_idle_nodes_power_down_and_their_vms_stop(cluster: Cluster) -> None:
    for node in HOSTS:
        wait_for(f"{node} powered down", lambda n=node: cluster.state(n), lambda s: s == "idle~",
                 SUSPEND_S + SUSPEND_TIMEOUT_S + 60)  # fmt: skip
        assert cluster.vm_power(node) == "stopped"
    log = cluster.sh("cat /var/log/slurm/gpucl-power.log").stdout
    assert re.search(r"suspend gpu-pg0-(\[1-2\]|1|2) \(\d nodes?\)", log), log


def test_drains_keep_their_owner_and_reason_through_power_down_and_up(cluster: Cluster) -> None:
    """An admin's maintenance drain and the deep tier's drain (one the fast tier never lifts) on
    idle powered-up nodes: each node is powered down by Slurm with its drain (idle_on_node_suspend
    cleared it at POWERING_DOWN: the node came back idle~ and the next job started it), powered up
    again with its drain, reason and owner, and only the owner's RESUME lifts it."""
    drains = {"gpu-pg0-1": "admin: rack inspection", "gpu-pg0-2": "gpucl-deep: ib link flaps"}
    jobs = [cluster.sbatch("-N1", "-w", n, "--time=5", "--wrap", "'true'") for n in drains]
    for job in jobs:  # powers both up
        wait_for(f"job {job}", lambda j=job: cluster.job(j).get("JobState"),
                 lambda s: s == "COMPLETED", RESUME_TIMEOUT_S)  # fmt: skip
    down_s = SUSPEND_S + SUSPEND_TIMEOUT_S + 60
    for node, why in drains.items():
        drain = cluster.sh(f"scontrol update NodeName={node} State=DRAIN Reason='{why}'")
        assert drain.returncode == 0, drain.stderr
    for node, why in drains.items():
        wait_for(f"{node} powered down, still drained", lambda n=node: cluster.state(n),
                 lambda s: s in ("drained~", "idle~"), down_s)  # fmt: skip
        assert (cluster.state(node), cluster.reason(node)) == ("drained~", why)
        assert cluster.vm_power(node) == "stopped"
    # monitoring follows: each drain with its owner; a powered-down node is neither scraped nor
    # billed
    assert cluster.sh("systemctl start gpucl-slurm-metrics.service").returncode == 0
    prom = cluster.sh("cat /var/lib/prometheus/node-exporter/gpucl-slurm.prom").stdout
    assert re.search(r'gpucl_slurm_node_drained\{node="gpu-pg0-1".*owner="admin"\} 1', prom), prom
    assert re.search(r'gpucl_slurm_node_drained\{node="gpu-pg0-2".*owner="deep"\} 1', prom), prom
    assert 'gpucl_cost_usd_per_hour{partition="gpu"} 0.00' in prom, prom
    targets = cluster.sh("cat /etc/gpu-clusters/prometheus/targets/dcgm.json").stdout
    assert json.loads(targets) == [], targets
    for node in drains:
        assert cluster.sh(f"scontrol update NodeName={node} State=POWER_UP").returncode == 0
    for node, why in drains.items():
        wait_for(f"{node} powered up and registered", lambda n=node: cluster.state(n),
                 lambda s: s == "drained", RESUME_TIMEOUT_S)  # fmt: skip
        assert cluster.reason(node) == why
        assert cluster.sh("systemctl start gpucl-slurm-metrics.service").returncode == 0
        targets = json.loads(
            cluster.sh("cat /etc/gpu-clusters/prometheus/targets/dcgm.json").stdout
        )
        assert node in [t["labels"]["node"] for t in targets], targets  # scraped again
        user = cluster.sh(f"scontrol show node {node}").stdout
        assert re.search(r"Reason=.* \[root@", user), user  # the owner, kept
        assert cluster.sh(f"scontrol update NodeName={node} State=RESUME").returncode == 0
        wait_for(f"{node} back in service", lambda n=node: cluster.state(n),
                 lambda s: s in ("idle", "idle%", "idle~"), 30)  # fmt: skip


def test_a_job_gets_slurmds_locked_memory_not_the_submitting_shells(cluster: Cluster) -> None:
    """RDMA needs unlimited locked memory: slurmd has it (LimitMEMLOCK=infinity) on a VM, and
    PropagateResourceLimitsExcept=MEMLOCK gives a job slurmd's limit. This host caps every process
    at 8 MiB (substitution rlimits), so the job must show slurmd's limit, not the shell's 1024 KiB
    (without the setting it got the shell's)."""
    wrap = "'ulimit -l; grep -i \"^Max locked memory\" /proc/$(pidof slurmd)/limits'"
    proc = cluster.sh("ulimit -S -l 1024 && sbatch --parsable -N1 -w gpu-pg0-1 --time=5 "
                      f"-o /sched/memlock-%j.out --wrap {wrap}")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip()
    wait_for("the memlock job", lambda: cluster.job(job).get("JobState"),
             lambda s: s == "COMPLETED", RESUME_TIMEOUT_S)  # fmt: skip
    got, slurmd = cluster.sh(f"cat /sched/memlock-{job}.out").stdout.strip().splitlines()
    soft = slurmd.split()[3]
    assert got == ("unlimited" if soft == "unlimited" else str(int(soft) // 1024)), (got, slurmd)
    assert got != "1024"


def give_back(cluster: Cluster, node: str) -> None:
    """The scheduler's gpucl-power-return timer (scaled to every 10 s): a node a failed power-up
    left DOWN~ is held DOWN for the scaled hold, then becomes an ordinary powered-down node
    (without idle_on_node_suspend nothing else clears DOWN, and a forced power down no longer
    does)."""
    # A failed start leaves the node powering up in Slurm's eyes until ResumeTimeout, whose
    # ResumeFailProgram renews its reason: the hold counts from then.
    wait_for(f"{node} returned by the timer", lambda: cluster.state(node), lambda s: s == "idle~",
             RESUME_TIMEOUT_S + power.return_after_s() + 60)  # fmt: skip
    log = cluster.sh("cat /var/log/slurm/gpucl-power.log").stdout
    assert f"{node}: returned to the powered-down pool (State=IDLE)" in log, log
    assert re.search(rf"{node}: DOWN \d+ s ago by a power failure; returned after", log), log


def test_a_node_that_cannot_start_is_down_with_the_cause_and_its_job_runs_elsewhere(
    cluster: Cluster,
) -> None:
    for node in HOSTS:  # both powered down, so Slurm picks the first, gpu-pg0-1
        wait_for(f"{node} powered down", lambda n=node: cluster.state(n), lambda s: s == "idle~",
                 SUSPEND_S + SUSPEND_TIMEOUT_S + 60)  # fmt: skip
    cluster.fault(HOSTS["gpu-pg0-1"], "start-fails")  # as docs/power.md shows it
    try:
        job = cluster.sbatch("-N1", "--time=5", "--wrap", "'hostname'")
        reason = wait_for("gpu-pg0-1 DOWN with the cause", lambda: cluster.reason("gpu-pg0-1"),
                          lambda r: r.startswith("gpucl: power: start failed"), 90)  # fmt: skip
        assert "AllocationFailed" in reason
        assert cluster.state("gpu-pg0-1").startswith("down")
        done = wait_for("the job to finish elsewhere", lambda: cluster.job(job),
                        lambda j: j.get("JobState") in ("COMPLETED", "FAILED", "NODE_FAIL"),
                        RESUME_TIMEOUT_S + 60)  # fmt: skip
        assert (done["JobState"], done["NodeList"]) == ("COMPLETED", "gpu-pg0-2"), done
        assert int(done.get("Restarts", "0")) >= 1, done  # requeued off the failed node
        assert cluster.vm_power("gpu-pg0-1") == "stopped"
    finally:
        cluster.fault(HOSTS["gpu-pg0-1"], "clear")
    give_back(cluster, "gpu-pg0-1")


def test_a_node_that_never_registers_is_down_after_resume_timeout_and_its_job_runs_elsewhere(
    cluster: Cluster,
) -> None:
    """The VM starts but its boot never reaches slurmd: no job waits in CONFIGURING past
    ResumeTimeout; then the node is DOWN with the cause (ResumeFailProgram), its VM deallocated,
    and the job requeued onto the other node. Both VMs get the fault until Slurm has picked one
    (its choice among powered-down nodes is its own); the other's is cleared before it starts."""
    resume_timeout = 90
    power.time_scale(cluster.workdir, cluster.scheduler, SUSPEND_S, SUSPEND_TIMEOUT_S,
                     resume_timeout)  # fmt: skip
    for node in HOSTS:
        wait_for(f"{node} powered down", lambda n=node: cluster.state(n), lambda s: s == "idle~",
                 SUSPEND_S + SUSPEND_TIMEOUT_S + 60)  # fmt: skip
    for host in HOSTS.values():
        cluster.fault(host, "boot-hangs")
    bad = None
    try:
        t0 = time.monotonic()
        job = cluster.sbatch("-N1", "--time=5", "--wrap", "'hostname'")
        bad = wait_for("the job given a node", lambda: cluster.job(job).get("NodeList"),
                       lambda n: n in HOSTS, 30)  # fmt: skip
        good = next(n for n in HOSTS if n != bad)
        cluster.fault(HOSTS[good], "clear")
        reason = wait_for(f"{bad} DOWN with the cause", lambda: cluster.reason(bad),
                          lambda r: r.startswith("gpucl: power: not registered"),
                          resume_timeout + 60)  # fmt: skip
        left_configuring = time.monotonic() - t0
        assert "ResumeTimeout" in reason, reason
        assert cluster.state(bad).startswith("down")
        done = wait_for("the job to finish elsewhere", lambda: cluster.job(job),
                        lambda j: j.get("JobState") in ("COMPLETED", "FAILED", "NODE_FAIL"),
                        resume_timeout + 120)  # fmt: skip
        assert (done["JobState"], done["NodeList"]) == ("COMPLETED", good), done
        assert int(done.get("Restarts", "0")) >= 1, done
        wait_for(f"{bad}'s VM deallocated", lambda: cluster.vm_power(bad),
                 lambda p: p == "stopped", 60)  # fmt: skip
        print(f"{bad} given up after {left_configuring:.0f} s (ResumeTimeout {resume_timeout})")
        assert left_configuring < resume_timeout + 45
    finally:
        for host in HOSTS.values():
            cluster.fault(host, "clear")
        scale_time(cluster)
    give_back(cluster, bad)
    # usable after a reconfigure too (a RESUME here left it NOT_RESPONDING, stranded by one)
    cluster.sh("scontrol reconfigure")
    job = cluster.sbatch("-N1", "-w", bad, "--time=5", "--wrap", "'hostname'")
    wait_for(f"a job on {bad} after the reconfigure", lambda: cluster.job(job).get("JobState"),
             lambda s: s == "COMPLETED", RESUME_TIMEOUT_S)  # fmt: skip


def test_a_spot_eviction_drains_requeues_and_deallocates(cluster: Cluster) -> None:
    job = cluster.sbatch("-N1", "-w", "gpu-pg0-1", "--time=10", "--wrap", "'sleep 600'")
    wait_for("the long job to run", lambda: cluster.job(job).get("JobState"),
             lambda s: s == "RUNNING", RESUME_TIMEOUT_S)  # fmt: skip
    cluster.fault(HOSTS["gpu-pg0-1"], "preempt")
    try:
        requeued = wait_for("the job requeued", lambda: cluster.job(job),
                            lambda j: int(j.get("Restarts", "0")) >= 1, 60)  # fmt: skip
        assert int(requeued["Restarts"]) >= 1, requeued
        power_now = wait_for("the evicted VM deallocated", lambda: cluster.vm_power("gpu-pg0-1"),
                             lambda p: p == "stopped", 90)  # fmt: skip
        assert power_now == "stopped"
        # not drained~: Slurm clears the drain of a node powered down on request (Slurm 24.11
        # keeps the reason's text when accounting is off, so the state, not the reason, tells)
        state = wait_for("gpu-pg0-1 powered down, not drained", lambda: cluster.state("gpu-pg0-1"),
                         lambda s: s == "idle~", 90)  # fmt: skip
        assert state == "idle~"
        assert cluster.reason("gpu-pg0-1").startswith("gpucl: spot: spot eviction notice")
    finally:
        cluster.sh(f"scancel {job}")
        cluster.fault(HOSTS["gpu-pg0-1"], "clear")


TEXTFILE = "/var/lib/prometheus/node-exporter/gpucl-slurm.prom"


def _monitored(cluster: Cluster) -> set[str]:
    """The nodes Prometheus scrapes now: the target lists the Slurm exporter writes."""
    ran = cluster.sh("systemctl start gpucl-slurm-metrics.service")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    found: set[str] = set()
    for job in ("node", "dcgm"):
        text = cluster.sh(f"cat /etc/gpu-clusters/prometheus/targets/{job}.json").stdout
        found |= {t["labels"]["node"] for t in json.loads(text)}
    return found


def test_a_resize_from_two_to_three_nodes_joins_without_touching_a_running_job(
    cluster: Cluster, tmp_path: Path
) -> None:
    """What `pulumi up` does for `nodes: 3`: the scheduler's Run Command (render_config_sync, run
    as Azure runs it: a root bash script) and one more scale-set VM booted from the same GPU
    user-data; the running job keeps running. The new VM has instance id 4, as Azure gives after
    an earlier 4 -> 2 (a uniform scale set never reuses an id): it asks the scheduler's name map
    for its name, joins as gpu-pg0-3 (by the old rule it was gpu-pg0-5, refused by slurmctld),
    runs a job, and powering gpu-pg0-3 down deallocates that VM. Then back to `nodes: 2`: the
    drain-only Run Command (Pulumi runs it before it lowers a capacity) drains gpu-pg0-3 and
    deletes exactly its VM, id 4 (Azure's own pick on a capacity decrease is by instance id, not
    by name), the config sync takes the name out of slurm.conf, and the map frees it."""
    from clusterctl.plan.program import make_plan, write_plan
    from clusterctl.render.slurm_conf import render_config_sync
    from clusterctl.sandbox.vm import vmstate

    job = cluster.sbatch("-N1", "-w", "gpu-pg0-2", "--time=10", "--wrap", "'sleep 600'")
    before = wait_for("the long job to run", lambda: cluster.job(job),
                      lambda j: j.get("JobState") == "RUNNING", RESUME_TIMEOUT_S)  # fmt: skip
    try:
        plan = make_plan("azure-h100", ["partitions[0].nodes=3"])
        write_plan(plan, tmp_path / "plan")
        state = vmstate.load(cluster.workdir)
        script = Path(state.nodes[cluster.scheduler]["root"]) / "root/slurm-config-sync.sh"
        # node-size substitution: the containers pose as ND nodes in the new slurm.conf too
        script.write_text(
            substitutions.rewrite_config_sync(render_config_sync(plan.spec, "azure-h100"))
        )
        sync = cluster.sh("bash /root/slurm-config-sync.sh", timeout=180)
        assert sync.returncode == 0, sync.stdout + sync.stderr
        assert "updated /etc/slurm/slurm.conf" in sync.stdout, sync.stdout
        assert "scontrol reconfigure done" in sync.stdout, sync.stdout
        scale_time(cluster)  # the sync wrote the rendered slurm.conf: its power times in minutes
        third = boot.cluster_from_plan(tmp_path / "plan", nodes=3)[-1]
        assert (third.name, third.vm_name) == ("gpu-pg0-000002", "h100-gpu-pg0_2")
        third = dataclasses.replace(third, name="gpu-pg0-000004", vm_name="h100-gpu-pg0_4")
        report = boot.add_node(cluster.workdir, third, log=lambda _m: None)
        assert report["cloud_init"] == "done" and not report["errors"], report
        cluster.vms["gpu-pg0-3"] = third.vm_name
        new = cluster.sbatch("-N1", "-w", "gpu-pg0-3", "--time=5", "--wrap", "'hostname'")
        ended = ("COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED")
        done = wait_for("a job on the new node", lambda: cluster.job(new).get("JobState"),
                        lambda s: s in ended, RESUME_TIMEOUT_S)  # fmt: skip
        assert done == "COMPLETED", cluster.job(new)
        names = json.loads(cluster.sh("cat /sched/h100/names.json").stdout)["names"]
        assert names["h100-gpu-pg0"] == {"0": "gpu-pg0-1", "1": "gpu-pg0-2", "4": "gpu-pg0-3"}
        # monitoring follows the resize with no reconfiguration: the new node is a target
        assert "gpu-pg0-3" in _monitored(cluster)
        wait_for("gpu-pg0-3 powered down", lambda: cluster.state("gpu-pg0-3"),
                 lambda s: s == "idle~", SUSPEND_S + SUSPEND_TIMEOUT_S + 60)  # fmt: skip
        assert cluster.vm_power("gpu-pg0-3") == "stopped"
        small = make_plan("azure-h100", ["partitions[0].nodes=2"]).spec
        for drain_only in (True, False):
            text = render_config_sync(small, "azure-h100", drain_only=drain_only)
            script.write_text(text if drain_only else substitutions.rewrite_config_sync(text))
            sync = cluster.sh("bash /root/slurm-config-sync.sh", timeout=300)
            assert sync.returncode == 0, sync.stdout + sync.stderr
            if not drain_only:
                scale_time(cluster)
            if drain_only:
                assert "deleted the VMs of gpu-pg0-3" in sync.stdout, sync.stdout
                listed = power.act(cluster.workdir, "list", ["h100-gpu-pg0"])
                assert listed == {"h100-gpu-pg0": ["0", "1"]}, listed
        cluster.vms.pop("gpu-pg0-3")
        assert cluster.sh("sinfo -h -N -o %N").stdout.split() == ["gpu-pg0-1", "gpu-pg0-2"]
        # ... and forgets the removed one: no target, no series, two nodes counted
        assert "gpu-pg0-3" not in _monitored(cluster)
        prom = cluster.sh(f"cat {TEXTFILE}").stdout
        assert "gpu-pg0-3" not in prom, prom
        counted = re.findall(r"^gpucl_slurm_nodes\{[^}]*\} (\d+)", prom, re.M)
        assert sum(int(n) for n in counted) == 2, prom
        run = cluster.sh("systemctl start gpucl-names.service", timeout=180)
        assert run.returncode == 0, run.stdout + run.stderr
        names = json.loads(cluster.sh("cat /sched/h100/names.json").stdout)["names"]
        assert names["h100-gpu-pg0"] == {"0": "gpu-pg0-1", "1": "gpu-pg0-2"}
        after = cluster.job(job)
        assert after["JobState"] == "RUNNING", after
        assert (after["StartTime"], after["Restarts"]) == (before["StartTime"], before["Restarts"])
    finally:
        cluster.sh(f"scancel {job}")


def test_node_replace_returns_the_node_under_its_name_on_a_fresh_os_disk(cluster: Cluster) -> None:
    """`clusterctl node replace --sandbox-dir` as a user runs it (ssh to the scheduler as the
    admin, sudo): refused while a job runs, then with --force the job is requeued, the node
    drained, reimaged (a new OS disk, cloud-init runs again), and back in service after its
    health check, under its name; power saving (SuspendTime scaled to 20 s) leaves it alone
    while it is rebuilt, and applies to it again afterwards."""
    node, host = "gpu-pg0-1", HOSTS["gpu-pg0-1"]
    job = cluster.sbatch("-N1", "-w", node, "--time=10", "--wrap", "'sleep 600'")
    wait_for("a job on the node", lambda: cluster.job(job).get("JobState"),
             lambda s: s == "RUNNING", RESUME_TIMEOUT_S)  # fmt: skip
    assert cluster.sh("echo old-disk > /root/replace-marker", host).returncode == 0
    upper = cluster.workdir / "nodes" / host / "upper"
    assert (upper / "root" / "replace-marker").exists()  # the OS disk, seen from the host
    argv = [sys.executable, "-m", "clusterctl", "node", "replace", node,
            "--sandbox-dir", str(cluster.workdir), "--timeout", "8"]  # fmt: skip
    try:
        refused = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert f"runs job(s) {job}; pass --force" in refused.stderr
        proc = subprocess.run([*argv, "--force"], capture_output=True, text=True, timeout=700,
                              cwd=ROOT)  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"requeued {job}" in proc.stdout
        assert f"{node} passed its health check and is back in service" in proc.stdout
        assert f"power saving applies to {node} again" in proc.stdout
    finally:
        cluster.sh(f"scancel {job}")
    assert not (upper / "root" / "replace-marker").exists()  # a new OS disk
    assert "SuspendExcNodes         = (null)" in cluster.sh("scontrol show config").stdout
    log = cluster.sh("cat /var/log/slurm/gpucl-power.log").stdout
    assert f"{node}: reimage accepted" in log, log
    # slurmd and munge come from the user-data's packages: on a new OS disk the node could only
    # register again because cloud-init built it again


def test_a_recreated_scheduler_keeps_its_queue_drains_and_reservations(cluster: Cluster) -> None:
    """The scheduler VM re-created on a new OS disk with its protected data disk (Azure: the VM
    replaced, the disk re-attached; here its reimage): slurmctld's state is on the data disk, so a
    held job, an admin's drain and a reservation are all back (on the OS disk all were lost)."""
    held = cluster.sbatch("--hold", "-N1", "--time=5", "--wrap", "'true'")
    why = "admin: bad DIMM, ticket 4711"
    assert (
        cluster.sh(f"scontrol update NodeName=gpu-pg0-2 State=DRAIN Reason='{why}'").returncode == 0
    )
    resv = cluster.sh("scontrol create reservation ReservationName=gpucl-maint StartTime=now+1days "
                      "Duration=60 Nodes=gpu-pg0-1 Users=root")  # fmt: skip
    assert resv.returncode == 0, resv.stdout + resv.stderr
    assert cluster.sh("echo old > /root/os-disk-marker").returncode == 0
    # Prometheus' data lives on the data disk: what it wrote survives the new OS disk
    query = "curl -sS --max-time 10 --get http://127.0.0.1:9090/api/v1/query --data-urlencode"
    assert '"status":"success"' in cluster.sh(f"{query} query=up").stdout
    t0 = int(cluster.sh("date +%s").stdout)
    assert cluster.sh("systemctl stop prometheus && ls /shared/prometheus/wal").returncode == 0
    with power.locked(cluster.workdir) as state:  # act() takes GPU VMs only
        power.reimage(state, cluster.scheduler)
    done = cluster.sh("cloud-init status --wait --long", timeout=600)
    assert "status: done" in done.stdout, done.stdout + done.stderr
    assert cluster.sh("test -e /root/os-disk-marker").returncode == 1  # a new OS disk
    wait_for("slurmctld answering", lambda: cluster.sh("scontrol ping").stdout,
             lambda s: "UP" in s, 120)  # fmt: skip
    job = cluster.job(held)
    assert (job.get("JobState"), job.get("Reason")) == ("PENDING", "JobHeldUser"), job
    assert cluster.reason("gpu-pg0-2") == why
    assert cluster.state("gpu-pg0-2").startswith("drain"), cluster.state("gpu-pg0-2")
    shown = cluster.sh("scontrol show reservation gpucl-maint").stdout
    assert "Nodes=gpu-pg0-1" in shown, shown
    # samples from before the re-create (the new Prometheus started after t0) answer again
    old = f"{query} 'query=up{{job=\"prometheus\"}}' --data-urlencode time={t0 - 5}"
    wait_for("Prometheus with its samples from before", lambda: cluster.sh(old).stdout,
             lambda s: '"result":[{' in s, 120)  # fmt: skip
    cluster.sh(f"scancel {held}; scontrol delete ReservationName=gpucl-maint")
    cluster.sh("scontrol update NodeName=gpu-pg0-2 State=RESUME")
