"""Shared GPUs in the VM sandbox: one boot of azure-h100 with two one-node partitions, `gpu` with
the MIG layout 1g.10gb x7 on each of its 8 GPUs and `shared` with 4 shards per GPU.

The MIG node's boot step (gpucl-mig.service, before slurmd) makes the instances on the stand-in
nvidia-smi; slurmd registers the typed GRES with the real slurmctld; two `gpu:1g.10gb:1` jobs run
at once on the node, each seeing only its own instance (the stand-in's `nvidia-smi -L` lists
only the instances whose /dev/nvidia-caps device the job's cgroup lets it open); with all 56
slices (7 on each GPU) taken, one more 1g job pends for Resources; 32 shard jobs run at once on
the shard node's 8 GPUs and a 33rd pends. Root only."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[3]
SKU = "Standard_ND96isr_H100_v5"
PARTITIONS = (
    f"partitions=[{{name: gpu, sku: {SKU}, nodes: 1, default: true,"
    " sharing: {mig: {1g.10gb: 7}}},"
    f" {{name: shared, sku: {SKU}, nodes: 1, sharing: {{shards: 4}}}}]"
)
SLICES = 8 * 7
SHARDS = 8 * 4


@dataclass
class Shared:
    workdir: Path
    scheduler: str
    mig_host: str
    shard_host: str

    def sh(self, node: str, cmd: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return boot.run(self.workdir, node, ["sh", "-c", cmd], timeout=timeout)

    def slurm(self, cmd: str, timeout: float = 120) -> str:
        done = self.sh(self.scheduler, cmd, timeout)
        assert done.returncode == 0, (cmd, done.stdout, done.stderr)
        return done.stdout

    def states(self, job: str) -> list[str]:
        """The job's (or array's) task states and reasons, `STATE REASON` each."""
        return self.slurm(f"squeue -h -j {job} -o '%T %r'").splitlines()


def _wait(probe, ok, timeout: float):
    deadline = time.monotonic() + timeout
    seen = probe()
    while not ok(seen) and time.monotonic() < deadline:
        time.sleep(3)
        seen = probe()
    return seen


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    plan = tmp_path_factory.mktemp("plan")
    subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-h100", "--out", str(plan),
         "--set", PARTITIONS],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    with booted_stack(tmp_path_factory, nodes=1, plan=plan) as (specs, workdir, reports):
        assert all(r["cloud_init"] == "done" for r in reports.values()), reports
        sched = next(s for s in specs if s.role == "scheduler")
        gpus = [s for s in specs if s.role == "gpu"]
        mig = next(s for s in gpus if "gpucl-mig.service" in s.user_data)
        shard = next(s for s in gpus if s is not mig)
        s = Shared(workdir, sched.name, mig.name, shard.name)
        seen = _wait(
            lambda: s.slurm("sinfo -h -N -o '%N %T'").split(),
            lambda out: out.count("idle") == 2,
            180,
        )
        assert seen.count("idle") == 2, seen
        yield s


def test_the_boot_step_made_the_layout_before_slurmd(shared: Shared) -> None:
    unit = shared.sh(shared.mig_host, "systemctl show -p ActiveState,Result gpucl-mig.service")
    assert "ActiveState=active" in unit.stdout and "Result=success" in unit.stdout, unit.stdout
    order = shared.sh(shared.mig_host, "systemctl show -p Before gpucl-mig.service").stdout
    assert "slurmd.service" in order
    lgi = shared.sh(shared.mig_host, "nvidia-smi mig -lgi").stdout
    assert len(re.findall(r"MIG 1g\.10gb +19 +\d+ +\d:1 ", lgi)) == SLICES, lgi
    modes = shared.sh(shared.shard_host, "nvidia-smi --query-gpu=mig.mode.current").stdout
    assert set(modes.split()) == {"Disabled"}  # the shard partition's GPUs stay whole


def test_slurmd_registers_the_typed_gres(shared: Shared) -> None:
    mig = shared.slurm("scontrol show node gpu-pg0-1 -o")
    assert f"Gres=gpu:1g.10gb:{SLICES}" in mig and "State=IDLE" in mig, mig
    whole = shared.slurm("scontrol show node shared-pg0-1 -o")
    # slurmd types a GPU's shards with the GPU's type (Slurm 26.05 reports shard:h100:32)
    assert f"Gres=gpu:h100:8,shard:h100:{SHARDS}" in whole, whole


def test_two_1g_jobs_run_at_once_each_seeing_only_its_slice(shared: Shared) -> None:
    script = "nvidia-smi -L; echo CVD=$CUDA_VISIBLE_DEVICES; sleep 60"
    jobs = [
        shared.slurm(
            f"sbatch --parsable -p gpu -N1 --gres=gpu:1g.10gb:1 --time=5 "
            f"--output=/tmp/slice-%j.out --wrap '{script}'"
        ).strip()
        for _ in range(2)
    ]
    try:
        running = _wait(
            lambda: [shared.states(j) for j in jobs],
            lambda st: all(s and s[0].startswith("RUNNING") for s in st),
            120,
        )
        assert all(s and s[0].startswith("RUNNING") for s in running), running
        time.sleep(3)  # the jobs' first lines
        seen = []
        for job in jobs:
            out = shared.sh(shared.mig_host, f"cat /tmp/slice-{job}.out").stdout
            uuids = re.findall(r"^  MIG 1g\.10gb +Device +\d+: \(UUID: (MIG-\S+)\)$", out, re.M)
            assert len(uuids) == 1, out  # its own instance, none of the other 55
            # one device for CUDA (Slurm numbers it within the job's cgroup: gres.html)
            assert re.search(r"^CVD=\d+$", out, re.M), out
            seen.append(uuids[0])
        assert seen[0] != seen[1]
    finally:
        shared.slurm(f"scancel {' '.join(jobs)}")


def test_with_every_slice_taken_the_next_1g_job_pends(shared: Shared) -> None:
    array = shared.slurm(
        f"sbatch --parsable -p gpu -N1 --gres=gpu:1g.10gb:1 --time=10 --array=0-{SLICES} "
        "--output=/dev/null --wrap 'sleep 300'"
    ).strip()
    try:
        states = _wait(
            lambda: shared.states(array),
            lambda st: sum(s.startswith("RUNNING") for s in st) == SLICES,
            240,
        )
        assert sum(s.startswith("RUNNING") for s in states) == SLICES, states
        pending = [s for s in states if s.startswith("PENDING")]
        assert pending == ["PENDING Resources"], states
    finally:
        shared.slurm(f"scancel {array}")


def test_shard_jobs_share_the_gpus(shared: Shared) -> None:
    array = shared.slurm(
        f"sbatch --parsable -p shared -N1 --gres=shard:1 --time=10 --array=0-{SHARDS} "
        "--output=/dev/null --wrap 'sleep 300'"
    ).strip()
    try:
        states = _wait(
            lambda: shared.states(array),
            lambda st: sum(s.startswith("RUNNING") for s in st) == SHARDS,
            240,
        )
        # 32 jobs at once on 8 GPUs: four to a GPU; the 33rd waits for a shard
        assert sum(s.startswith("RUNNING") for s in states) == SHARDS, states
        assert [s for s in states if s.startswith("PENDING")] == ["PENDING Resources"], states
    finally:
        shared.slurm(f"scancel {array}")
