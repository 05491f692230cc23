"""The NVMe scratch survives a power cycle on a size with a resource disk.

ND A100 v4 VMs have Azure's resource (temp) disk, which cloud-init mounts at /mnt through its
default ephemeral0 mount (substitution resource-disk). One boot of the azure-a100 stack (1 scheduler
+ 1 GPU node); Slurm powers the node down and a job powers it up again (gpucl-power's deallocate
and start, through the power stand-in); then: /mnt is the resource disk mounted by cloud-init, the
scratch is the NVMe stand-in, enroot's runtime is on it, slurmd is active, and the job ran; enroot's
layer cache on the OS disk kept its files while its unpacked containers on the NVMe did not.

With the scratch at /mnt/nvme (before 0b247cb) the /mnt mount, ordered after cloud-init's network
stage, covered the scratch after the cycle: pyxis (required, runtime under the scratch) stopped
slurmd and the node never returned. `GPUCL_VM_PLAN=<plan rendered by an older checkout>` boots
that plan instead, to see it. Root only."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from clusterctl.render.paths import ENROOT_CACHE
from clusterctl.sandbox.vm import boot, machine, power
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[3]
RESUME_TIMEOUT_S = 240
SUSPEND_S = 20
MARK = "gpucl-e2e-survives"


@dataclass
class Cycled:
    workdir: Path
    scheduler: str
    host: str
    """The GPU node's hostname (its container)."""
    node: str
    """Its Slurm name."""
    scratch: str
    """The scratch's mount point, as the booted user-data's gpucl-scratch.sh names it."""
    job: dict[str, str]
    """The job that powered the node up again, as scontrol shows it at the end."""

    def sh(self, cmd: str, node: str | None = None, timeout: float = 120):
        return boot.run(self.workdir, node or self.host, ["sh", "-c", cmd], timeout=timeout)


def _wait(what: str, probe, ok, timeout: float):
    deadline = time.monotonic() + timeout
    seen = probe()
    while not ok(seen):
        if time.monotonic() > deadline:
            return seen
        time.sleep(2)
        seen = probe()
    return seen


def _job(c: Cycled, job_id: str) -> dict[str, str]:
    text = c.sh(f"scontrol show job {job_id} -o", c.scheduler).stdout
    return dict(re.findall(r"(\w+)=(\S*)", text))


@pytest.fixture(scope="module")
def cycled(tmp_path_factory):
    plan = os.environ.get("GPUCL_VM_PLAN")
    if plan is None:
        plan_dir = tmp_path_factory.mktemp("plan")
        subprocess.run(
            [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-a100", "--out",
             str(plan_dir), "--set", "partitions[0].nodes=1"],
            cwd=ROOT, check=True, capture_output=True,
        )  # fmt: skip
    else:
        plan_dir = Path(plan)
    with booted_stack(tmp_path_factory, nodes=1, plan=plan_dir) as (specs, workdir, reports):
        assert all(r["cloud_init"] == "done" for r in reports.values()), reports
        sched = next(s for s in specs if s.role == "scheduler")
        gpu = next(s for s in specs if s.role == "gpu")
        assert gpu.resource_disk_mib, "the catalog gives ND A100 v4 a resource disk"
        scratch = re.search(r"mount_point=(\S+)", gpu.user_data).group(1)
        c = Cycled(workdir, sched.name, gpu.name, "", scratch, {})
        try:
            seen = _wait("the node registered",
                         lambda: c.sh("sinfo -h -N -o '%N %T'", sched.name).stdout.split(),
                         lambda s: len(s) == 2 and s[1] == "idle", 120)  # fmt: skip
            assert len(seen) == 2 and seen[1] == "idle", seen
            c.node = seen[0]
            # booted from its user-data by the resource-disk datasource, not DataSourceNone
            ds = c.sh("cat /var/lib/cloud/instance/datasource").stdout
            assert "DataSourceNoCloudAzureResourceDisk" in ds, ds
            # one file in enroot's layer cache (OS disk) and one among its unpacked containers
            # (NVMe) before the cycle: deallocation keeps the first and zeroes the second
            c.sh(f"mkdir -p {ENROOT_CACHE}/group-0 && echo layer > {ENROOT_CACHE}/group-0/{MARK}"
                 f" && echo data > {scratch}/enroot/data/{MARK}")  # fmt: skip
            # Slurm's own power saving: idle for SuspendTime, SuspendProgram -> gpucl-power ->
            # deallocate (the power stand-in stops the node's container)
            power.time_scale(workdir, sched.name, SUSPEND_S, 10, RESUME_TIMEOUT_S)
            state = _wait("the node powered down",
                          lambda: c.sh(f"sinfo -h -N -n {c.node} -o %T", sched.name).stdout.strip(),
                          lambda s: s == "idle~", SUSPEND_S + 90)  # fmt: skip
            assert state == "idle~"
            vm = _wait("the VM stopped",
                       lambda: power.act(workdir, "state", [gpu.vm_name])[gpu.vm_name]["power"],
                       lambda p: p == "stopped", 120)  # fmt: skip
            assert vm == "stopped"
            # no second power down while the checks below look at the node
            power.time_scale(workdir, sched.name, 3600, 10, RESUME_TIMEOUT_S)
            t0 = time.monotonic()
            out = c.sh(f"sbatch --parsable -N1 -w {c.node} --time=5 --wrap hostname", sched.name)
            assert out.returncode == 0, out.stderr
            job_id = out.stdout.strip().split(";")[0]
            ended = ("COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED", "TIMEOUT")
            # a node that never returns (the old code): stop well before ResumeTimeout
            _wait("the job to end", lambda: _job(c, job_id).get("JobState"), lambda s: s in ended,
                  180)  # fmt: skip
            c.job = _job(c, job_id)
            print(f"power up to job end: {time.monotonic() - t0:.1f} s ({c.job.get('JobState')})")
            yield c
        finally:
            _keep_logs(c)


def _keep_logs(c: Cycled) -> None:
    """The scheduler's Slurm and power logs and the node's journal into the workdir's logs/ (which
    `down` keeps), for a failure's post-mortem."""
    for node, cmd, name in (
        (c.scheduler, "tail -n 300 /var/log/slurm/*.log", "slurm-logs.txt"),
        (c.host, "journalctl -b --no-pager | tail -n 600", "journal.txt"),
        (c.host, "findmnt -R /; cat /etc/fstab", "mounts.txt"),
    ):
        out = c.workdir / "logs" / node
        out.mkdir(parents=True, exist_ok=True)
        try:
            (out / name).write_text(c.sh(cmd, node).stdout)
        except Exception as e:  # a stopped node: nothing to enter
            (out / name).write_text(f"not read: {e}\n")


def _real(c: Cycled, path: str) -> str:
    return c.sh(f"realpath {path}").stdout.strip()


def test_mnt_is_the_resource_disk_mounted_by_cloud_init(cycled: Cycled) -> None:
    fstab = cycled.sh("cat /etc/fstab").stdout
    entry = next((ln for ln in fstab.splitlines() if ln.split()[1:2] == ["/mnt"]), "")
    assert entry.startswith(f"{machine.RESOURCE_DISK}-part1"), fstab
    assert "comment=cloudconfig" in entry and "_netdev" in entry, entry  # cc_mounts' default
    source, fstype = cycled.sh("findmnt -no SOURCE,FSTYPE --mountpoint /mnt").stdout.split()
    assert (source, fstype) == (_real(cycled, f"{machine.RESOURCE_DISK}-part1"), "ext4")


def test_the_scratch_is_the_nvme_after_the_power_cycle(cycled: Cycled) -> None:
    devices = cycled.sh("cat /etc/gpucl-sandbox/devices").stdout
    nvme = next(ln.split()[1] for ln in devices.splitlines() if machine.NVME_MODEL in ln)
    got = cycled.sh(f"findmnt -no SOURCE,FSTYPE -T {cycled.scratch}/enroot/runtime").stdout
    assert got.split() == [nvme, "xfs"], (
        f"{cycled.scratch}/enroot/runtime is on {got.strip() or 'nothing'}, not the NVMe {nvme}:\n"
        + cycled.sh("findmnt -R /mnt; findmnt -R " + cycled.scratch).stdout
    )
    runtime = cycled.sh(f"test -d {cycled.scratch}/enroot/runtime && echo yes").stdout.strip()
    assert runtime == "yes"


def test_slurmd_is_active_and_the_job_ran_on_the_node(cycled: Cycled) -> None:
    active = cycled.sh("systemctl is-active slurmd").stdout.strip()
    assert active == "active", cycled.sh("journalctl -b -u slurmd --no-pager | tail -20").stdout
    assert (cycled.job.get("JobState"), cycled.job.get("NodeList")) == (
        "COMPLETED",
        cycled.node,
    ), cycled.job
    state = cycled.sh(f"sinfo -h -N -n {cycled.node} -o %T", cycled.scheduler).stdout.strip()
    assert state in ("idle", "mixed", "allocated"), state


def test_enroots_layer_cache_survives_the_power_cycle_and_the_nvme_does_not(
    cycled: Cycled,
) -> None:
    """Azure wipes local NVMe on deallocation (the sandbox zeroes the NVMe stand-in, substitution
    power): with the layer cache there, a resumed node pulled every image again."""
    conf = cycled.sh("cat /etc/enroot/enroot.conf.d/50-gpu-clusters.conf").stdout
    assert f"ENROOT_CACHE_PATH {ENROOT_CACHE}/group-$(id -g)" in conf, conf
    kept = cycled.sh(f"cat {ENROOT_CACHE}/group-0/{MARK}").stdout.strip()
    assert kept == "layer", cycled.sh(f"ls -la {ENROOT_CACHE} {ENROOT_CACHE}/group-0").stdout
    gone = cycled.sh(f"test -e {cycled.scratch}/enroot/data/{MARK} && echo there").stdout
    assert gone.strip() == "", "the NVMe kept a file across deallocation: nothing was wiped"
    mode = cycled.sh(f"stat -c %a {ENROOT_CACHE}").stdout.strip()
    assert mode == "1777", mode
