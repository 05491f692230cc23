"""`headNode.accounting: true` built by the scheduler's user-data and run for real (issue 15):
MariaDB on the data disk, slurmdbd after it, the cluster registered, the admin user associated
with an account; a finished job shows in `sacct` and in `sreport`'s job report by account, and a
restart of slurmdbd loses nothing. sreport reports whole hours only (it clamps a report's end to
now and rounds it down to the hour), so the report is asked with its client clock an hour ahead
(the host's libfaketime, preloaded into sreport alone): what a user reading it next hour sees.
(Cluster utilization comes from slurmdbd's hourly rollup, which a test cannot wait for.) Root
only."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    plan = tmp_path_factory.mktemp("plan-accounting")
    subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-h100", "--out", str(plan),
         "--set", "partitions[0].nodes=1", "--set", "headNode.accounting=true"],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    with booted_stack(tmp_path_factory, nodes=1, plan=plan) as (specs, workdir, reports):
        sched = next(s.name for s in specs if s.role == "scheduler")
        assert reports[sched]["cloud_init"] == "done", reports[sched]
        assert not reports[sched]["errors"], reports[sched]
        yield workdir, sched


def sh(cluster, cmd: str) -> subprocess.CompletedProcess[str]:
    workdir, sched = cluster
    return boot.run(workdir, sched, ["sh", "-c", cmd], timeout=180)


def sacct_state(cluster, job: str) -> str:
    out = sh(cluster, f"sacct -n -X -P -j {job} -o State").stdout.split()
    return out[0] if out else ""


def wait_sacct(cluster, job: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while (state := sacct_state(cluster, job)) != "COMPLETED" and time.monotonic() < deadline:
        time.sleep(2)
    return state


def test_database_slurmdbd_and_cluster_are_up(cluster) -> None:
    for unit in ("mariadb", "slurmdbd", "slurmctld"):
        assert sh(cluster, f"systemctl is-active {unit}").stdout.strip() == "active", unit
    assert sh(cluster, "sacctmgr -n -P show cluster format=cluster").stdout.split() == ["h100"]
    datadir = sh(cluster, "mariadb -N -e 'select @@datadir'").stdout.strip()
    assert datadir.startswith("/shared/"), datadir  # on the data disk, not the OS disk
    conf = sh(cluster, "stat -c '%U %a' /etc/slurm/slurmdbd.conf").stdout.split()
    assert conf == ["slurm", "600"], conf  # slurmdbd refuses a readable StoragePass


def test_a_finished_job_shows_in_sacct_and_survives_a_slurmdbd_restart(cluster):
    job = sh(cluster, "sbatch --parsable --wait -N1 --time=1 --wrap 'sleep 2'")
    assert job.returncode == 0, job.stderr
    job_id = job.stdout.strip().split(";")[0]
    assert wait_sacct(cluster, job_id) == "COMPLETED"
    assert sh(cluster, "systemctl restart slurmdbd").returncode == 0
    assert wait_sacct(cluster, job_id) == "COMPLETED"  # still there
    second = sh(cluster, "sbatch --parsable --wait -N1 --time=1 --wrap true").stdout.strip()
    assert wait_sacct(cluster, second.split(";")[0]) == "COMPLETED"  # and recording again


FAKETIME_LIB = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")  # Debian's libfaketime


def next_hours_sreport(cluster, args: str) -> str:
    """`sreport ARGS` run on the scheduler as if an hour later (the report client only)."""
    workdir, sched = cluster
    if not FAKETIME_LIB.is_file():
        pytest.fail(f"{FAKETIME_LIB} missing: apt install libfaketime (.ci/run does)")
    shutil.copy(FAKETIME_LIB, Path(workdir) / "nodes" / sched / "root" / "var/tmp")
    lib = f"/var/tmp/{FAKETIME_LIB.name}"
    return sh(cluster, f"env LD_PRELOAD={lib} FAKETIME=+1h sreport {args}").stdout


def test_the_admins_finished_jobs_show_in_sreport_by_account(cluster) -> None:
    assocs = sh(cluster, "sacctmgr -n -P show assoc format=cluster,account,user").stdout.split()
    assert "h100|users|azureuser" in assocs, assocs
    # sreport's job reports leave out jobs that ran for 0 s: this one runs for 2
    job = sh(cluster, "cd /tmp && runuser -u azureuser -- sbatch --parsable --wait -N1 --time=1 "
                      "--output=/dev/null --wrap 'sleep 2'")  # fmt: skip
    assert job.returncode == 0, job.stderr
    assert wait_sacct(cluster, job.stdout.strip().split(";")[0]) == "COMPLETED"
    jobs = sh(cluster, "sacct -n -X -P -S now-2hours -o User,Account,State").stdout.split()
    assert "azureuser|users|COMPLETED" in jobs, jobs
    report = next_hours_sreport(
        cluster, "-n -P job sizesbyaccount PrintJobCount FlatView start=now-3hours end=now"
    )
    counts = {r[1]: int(r[7]) for r in (x.split("|") for x in report.splitlines()) if len(r) > 7}
    assert counts.get("users", 0) >= 1, f"sreport:\n{report}\nsacct:\n{jobs}"
