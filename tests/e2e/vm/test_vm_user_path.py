"""Every shipped Slurm stack the sandbox can boot, through the commands a user types:
`clusterctl sandbox up -s STACK` (its own checks: cloud-init `done` on every role but the
scheduler's disk note below, failed units, Slurm logs, munge, srun and sbatch), a job across the
GPU nodes with `sandbox exec`, and `sandbox down` leaving nothing. azure-h100 also runs on the
second Slurm release (trixie's 24.11, the one below Azure's 25.11; the default is sid's 26.05)
with one `validate --nccl` and `srun --mpi=pmix` from the scheduler, so behaviour that differs
between the two shows. Root only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import report
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec
from tests.conftest import SLURM_STACKS
from tests.e2e.vm.conftest import need_sandbox

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[3]


def _bootable() -> list[str]:
    from clusterctl.sandbox.vm import substitutions

    return [
        s
        for s in SLURM_STACKS
        if substitutions.cannot_boot(load_stack_spec(s, [])[0], catalog()) is None
    ]


# azure-h100 on the default release boots through the CLI in test_vm_cli (and the README's line)
RUNS = [(s, "26.05") for s in _bootable() if s != "azure-h100"] + [("azure-h100", "24.11")]


def cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def test_every_bootable_shipped_slurm_stack_is_in_the_runs() -> None:
    assert {s for s, _ in RUNS} == set(_bootable()) and "azure-team" in _bootable()


@pytest.mark.parametrize(("stack", "slurm"), RUNS, ids=[f"{s}-slurm{v}" for s, v in RUNS])
def test_sandbox_up_as_a_user_types_it(tmp_path: Path, stack: str, slurm: str) -> None:
    need_sandbox()
    workdir = tmp_path / "vm"
    try:
        up = cli("sandbox", "up", "-s", stack, "--nodes", "2", "--slurm", slurm,
                 "--workdir", str(workdir))  # fmt: skip
        problems = [line for line in up.stdout.splitlines() if line.startswith("problem:")]
        assert up.returncode == 0 and "sandbox up in" in up.stdout, problems or up.stderr[-2000:]
        ex = ["sandbox", "exec", "--workdir", str(workdir), "--"]
        version = cli(*ex, "scontrol", "--version")
        assert version.stdout.startswith(f"slurm-wlm {slurm}."), version
        hosts = cli(*ex, "srun", "-N2", "hostname")
        assert hosts.returncode == 0, hosts.stderr
        assert sorted(hosts.stdout.split()) == ["gpu-pg0-1", "gpu-pg0-2"], hosts.stdout
        if slurm != "26.05":
            # PMIx where srun runs (the scheduler installs the pinned pmix now); Debian builds
            # its pmix plugin for 24.11 only, so the default 26.05 run cannot show it
            pmix = cli(*ex, "su", "-", "azureuser", "-c",
                       "srun -N2 --mpi=pmix bash -c 'echo $PMIX_RANK'")  # fmt: skip
            assert pmix.returncode == 0, pmix.stdout + pmix.stderr
            assert sorted(pmix.stdout.split()) == ["0", "1"], pmix.stdout
            check = cli("validate", "--nccl", "--sandbox-dir", str(workdir), timeout=600)
            assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    finally:
        down = cli("sandbox", "down", "--workdir", str(workdir))
    assert down.returncode == 0, down.stderr
    assert report.leftovers(workdir) == []
