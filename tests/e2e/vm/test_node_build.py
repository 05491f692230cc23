"""How a node is built, executed for real: azure-h100's rendered user-data boots a scheduler and two
GPU nodes in the VM sandbox (systemd as PID 1, cloud-init from a NoCloud seed), and each defect of
the first round is checked where it showed. Each of these failed on the old templates; root
only."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot, checks, faults
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[3]
SCRATCH = "/nvme"
ENROOT_CACHE = "/var/cache/enroot"  # clusterctl/render/paths.py: on the OS disk


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # GPUCL_VM_PLAN: boot a plan rendered elsewhere, e.g. by an older checkout, to see these
    # tests fail on old templates (how each defect was shown).
    plan = os.environ.get("GPUCL_VM_PLAN")
    with booted_stack(tmp_path_factory, nodes=2, plan=Path(plan) if plan else None) as c:
        yield c


def _run(workdir: Path, node: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return boot.run(workdir, node, list(argv))


def _names(specs):
    sched = next(s.name for s in specs if s.role == "scheduler")
    gpus = [s.name for s in specs if s.role == "gpu"]
    return sched, gpus


def test_slurmd_gets_its_node_name_from_the_quoted_drop_in(cluster):
    """Defect 1: an unquoted Environment= split `-N gpu-pg0-1`; slurmd got a bare -N and died."""
    specs, workdir, _ = cluster
    _, gpus = _names(specs)
    for node in gpus:
        journal = _run(workdir, node, "journalctl", "-b", "--no-pager", "-u", "slurmd").stdout
        assert "Invalid environment assignment" not in journal
        assert _run(workdir, node, "systemctl", "is-active", "slurmd").stdout.strip() == "active"
        args = _run(workdir, node, "sh", "-c", "tr '\\0' ' ' < /proc/$(pidof slurmd)/cmdline")
        hostname = _run(workdir, node, "hostname").stdout.strip()
        assert f"-N {hostname}" in args.stdout, args.stdout


def test_slurm_and_munge_users_exist_with_the_same_ids_everywhere(cluster):
    """Defect 2: Microsoft's slurm-smd packages create no users; SlurmUser=slurm failed."""
    specs, workdir, _ = cluster
    for spec in specs:
        assert _run(workdir, spec.name, "id", "-u", "slurm").stdout.strip() == "11100"
        assert _run(workdir, spec.name, "id", "-u", "munge").stdout.strip() == "11101"
    sched, _ = _names(specs)
    assert _run(workdir, sched, "systemctl", "is-active", "slurmctld").stdout.strip() == "active"


def test_a_munge_credential_decodes_on_every_other_node(cluster):
    """Defect 3: munged kept the key its package made; no node could register."""
    specs, workdir, _ = cluster
    problems = checks.munge_problems(
        lambda node, argv: boot.run(workdir, node, argv), [s.name for s in specs]
    )
    assert problems == [], [p.line() for p in problems]


def test_sbatch_is_accepted_on_the_scheduler_without_pyxis(cluster):
    """Defect 4: a `required` pyxis line on a host without pyxis aborted every sbatch/srun.
    (Whether the job then runs depends on the health check: not asserted here.)"""
    specs, workdir, _ = cluster
    sched, gpus = _names(specs)
    job = _run(workdir, sched, "sbatch", "--parsable", "--time=1", "--wrap", "true")
    assert job.returncode == 0 and job.stdout.strip().split(";")[0].isdigit(), job.stderr
    _run(workdir, sched, "scancel", job.stdout.strip().split(";")[0])
    # every GPU node registered under its name: known to slurmctld and responding
    states = dict(
        line.split()
        for line in _run(workdir, sched, "sinfo", "-N", "-h", "-o", "%N %T").stdout.splitlines()
    )
    assert len(states) == len(gpus), states
    assert all("*" not in s and "unknown" not in s for s in states.values()), states


def test_enroot_dirs_exist_on_the_scratch(cluster):
    """Defect 5: ENROOT_TEMP_PATH named a directory nobody created. The layer cache lives on the
    OS disk, which survives a deallocation (the NVMe does not); the rest on the scratch."""
    specs, workdir, _ = cluster
    _, gpus = _names(specs)
    for sub in ("runtime", "data", "tmp"):
        assert _run(workdir, gpus[0], "test", "-d", f"{SCRATCH}/enroot/{sub}").returncode == 0
    assert _run(workdir, gpus[0], "test", "-d", ENROOT_CACHE).returncode == 0
    assert _run(workdir, gpus[0], "test", "-e", f"{SCRATCH}/enroot/cache").returncode != 0


def test_slurmctld_log_has_no_error_at_boot(cluster):
    """Defect 7a: cloud_reg_addrs is refused by Slurm since 23.11 (an error at every start)."""
    specs, workdir, _ = cluster
    sched, _ = _names(specs)
    log = _run(workdir, sched, "cat", "/var/log/slurm/slurmctld.log").stdout
    assert "slurmctld version" in log  # it started: an empty log proves nothing
    assert "cloud_reg_addrs" not in log
    bad = checks.log_errors(log)
    assert bad == [], "\n".join(bad)


def test_a_rebooted_node_comes_back_with_its_scratch_before_slurmd(cluster):
    """Defect 6: the scratch was assembled once by runcmd; after a reboot it was an empty folder
    on the OS disk, and slurmd was not ordered after its mounts."""
    specs, workdir, _ = cluster
    _, gpus = _names(specs)
    node = gpus[-1]
    boot.reboot(workdir, node)
    assert _run(workdir, node, "mountpoint", "-q", SCRATCH).returncode == 0
    after = _run(workdir, node, "systemctl", "show", "slurmd", "-p", "After").stdout
    assert "gpucl-scratch.service" in after
    # the NFS mounts are nofail (remote-fs.target does not wait): slurmd and its health check
    # started before them at every later boot, and the check drained the node ("/home not mounted")
    assert "home.mount" in after and "sched.mount" in after, after
    assert _run(workdir, node, "systemctl", "is-active", "slurmd").stdout.strip() == "active"
    assert _run(workdir, node, "test", "-d", f"{SCRATCH}/enroot/tmp").returncode == 0
    # healthy after the reboot, so back in service: not drained by its health check (mounts in
    # place), not left DOWN as "Node unexpectedly rebooted" (ReturnToService=2)
    sched, _ = _names(specs)
    slurm_name = _run(workdir, node, "/usr/local/libexec/gpu-clusters/node-name.sh").stdout.strip()
    deadline = time.monotonic() + 60
    while (state := _node_state(workdir, sched, slurm_name))[0] != "idle":
        assert time.monotonic() < deadline, state
        time.sleep(2)


HEALTH = "/usr/local/libexec/gpu-clusters/gpucl-health.sh"


def _node_state(workdir: Path, sched: str, name: str) -> tuple[str, str]:
    out = _run(workdir, sched, "sinfo", "-h", "-N", "-n", name, "-o", "%T|%E").stdout.strip()
    state, _, reason = out.partition("|")
    return state, reason


def test_health_check_drains_resumes_and_drains_again_on_slurm_24_11(cluster):
    """Defect 7b: Slurm 23.11-25.11 keeps the old reason after a resume (no accounting); the old
    script saw its prefix in that stale reason and never drained the node again. Runs the node's
    real health check: LBNL NHC (the github.com stand-in, built by the user-data) with the fast
    tier; the fault is a GPU falling off the bus (faults.inject fail-health / clear)."""
    specs, workdir, _ = cluster
    sched, gpus = _names(specs)
    node = gpus[0]
    name = _run(workdir, node, "hostname").stdout.strip()

    def health(fail: bool) -> tuple[str, str]:
        faults.inject(workdir, node, "fail-health" if fail else "clear")
        _run(workdir, node, "env", f"SLURMD_NODENAME={name}", HEALTH)
        return _node_state(workdir, sched, name)

    state, _ = health(fail=False)
    assert "drain" not in state, state
    state, reason = health(fail=True)
    assert "drain" in state, (state, reason)
    assert reason.startswith("gpucl: ") and "7 of 8 GPUs" in reason, reason
    state, reason = health(fail=False)
    assert "drain" not in state, (state, reason)  # resumed (the old reason may stay: 24.11)
    state, reason = health(fail=True)
    assert "drain" in state, (state, reason)  # drained again despite the stale reason
    # An admin's drain is never touched: not re-labelled on failure, not resumed on success.
    _run(workdir, sched, "scontrol", "update", f"nodename={name}", "state=resume")
    _run(workdir, sched, "scontrol", "update", f"nodename={name}", "state=drain",
         "reason=admin: maintenance")  # fmt: skip
    assert health(fail=True)[1] == "admin: maintenance"
    state, reason = health(fail=False)
    assert "drain" in state and reason == "admin: maintenance"
    _run(workdir, sched, "scontrol", "update", f"nodename={name}", "state=resume")


def test_enroot_installs_from_its_deb_and_keeps_our_settings(cluster):
    """The enroot .deb ships /etc/enroot/enroot.conf as a conffile: the old user-data wrote that
    file first, and dpkg stopped at its conffile prompt (no terminal: the install failed). Our
    settings are a drop-in now; the package's own file is untouched."""
    specs, workdir, _ = cluster
    _, gpus = _names(specs)
    for node in gpus:
        status = _run(workdir, node, "dpkg-query", "-W", "-f=${Status}", "enroot", "enroot+caps")
        assert status.stdout == "install ok installedinstall ok installed", status
        conf = _run(workdir, node, "cat", "/etc/enroot/enroot.conf.d/50-gpu-clusters.conf").stdout
        assert f"ENROOT_TEMP_PATH {SCRATCH}/enroot/tmp" in conf
        assert _run(workdir, node, "dpkg", "--verify", "enroot").stdout == ""
        for hook in ("50-slurm-pmi.sh", "50-slurm-pytorch.sh"):
            assert _run(workdir, node, "test", "-x", f"/etc/enroot/hooks.d/{hook}").returncode == 0


def test_nhc_is_installed_and_the_fast_tier_passes_on_a_healthy_node(cluster):
    """The HPC image has no /usr/sbin/nhc, and the old conf called Azure's container-only
    checks: every node drained. NHC is built from its pinned tag; the fast tier passes."""
    specs, workdir, _ = cluster
    sched, gpus = _names(specs)
    for node in gpus:
        run = _run(
            workdir, node, "/usr/sbin/nhc", "-c", "/etc/nhc/gpucl-fast.conf", "MARK_OFFLINE=0"
        )
        assert run.returncode == 0, run.stdout + run.stderr
    states = _run(workdir, sched, "sinfo", "-h", "-N", "-o", "%T").stdout.split()
    assert states and all("drain" not in s for s in states), states


def test_pyxis_is_loaded_everywhere_and_refuses_containers_here(cluster):
    """Real pyxis (its release source, vendored) built on every role against its Slurm and
    required in plugstack with the rendered arguments: its options parse on the login node; a
    container job reaches pyxis, whose import through enroot (a stand-in with no runtime) fails
    loudly: the job never runs bare."""
    specs, workdir, _ = cluster
    sched, _ = _names(specs)
    assert "--container-image" in _run(workdir, sched, "srun", "--help").stdout
    job = _run(workdir, sched, "srun", "-N1", "--time=1", "--container-image=ubuntu", "true")
    assert job.returncode != 0, job.stdout + job.stderr
    assert "pyxis: failed to import docker image: ubuntu" in job.stderr, job.stderr
    assert "needs a container runtime" in job.stderr, job.stderr
