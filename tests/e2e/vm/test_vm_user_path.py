"""Every shipped Slurm stack the sandbox can boot, through the commands a user types:
`clusterctl sandbox up -s STACK` (its own checks: cloud-init `done` on every role but the
scheduler's disk note below, failed units, Slurm logs, munge, srun and sbatch), a job across the
GPU nodes with `sandbox exec`, and `sandbox down` leaving nothing. azure-team also runs on the
second Slurm release (trixie's 24.11, the one below Azure's 25.11; the default is sid's 26.05):
its accounting (slurmdbd), login node (sackd) and team users are what differs most between
the two; there a team user runs `salloc -N2` then `srun --mpi=pmix` on the login node, and one
`validate --nccl` runs. Root only."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot, report
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
RUNS = [(s, "26.05") for s in _bootable() if s != "azure-h100"] + [("azure-team", "24.11")]
TEAM_USER = "bob"
"""azure-team's user in `language`, an account with no GPU cap (`vision` holds 8 GPUs: two whole
nodes would pend on AssocGrpGRES)."""


def cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def test_every_bootable_shipped_slurm_stack_is_in_the_runs() -> None:
    """Each boots here, but azure-h100 on the default release, which test_vm_cli boots through
    `sandbox up` (and the README's line)."""
    assert {s for s, _ in RUNS} | {"azure-h100"} == set(_bootable())
    assert "azure-team" in _bootable() and ("azure-team", "24.11") in RUNS


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
            # PMIx where srun runs: the login node installs the pinned pmix as the GPU nodes do
            # (srun dlopens libpmix.so.2 too). Debian builds its pmix plugin for 24.11 only, so
            # the default 26.05 run cannot show it.
            sync = cli("users", "sync", "-s", stack, "--sandbox-dir", str(workdir))
            assert sync.returncode == 0, sync.stdout + sync.stderr
            (login,) = [n for n, v in boot.status(workdir).items() if v["role"] == "login"]
            on_login = ["sandbox", "exec", "--workdir", str(workdir), "--node", login, "--"]
            deadline = time.monotonic() + 120  # the login node's users timer: every 30 s
            while cli(*on_login, "getent", "passwd", TEAM_USER).returncode != 0:
                assert time.monotonic() < deadline, f"{TEAM_USER} never reached {login}"
                time.sleep(5)
            ranks = "salloc -N2 srun --mpi=pmix bash -c 'echo $PMIX_RANK'"
            pmix = cli(*on_login, "su", "-", TEAM_USER, "-c", ranks, timeout=300)
            assert pmix.returncode == 0, pmix.stdout + pmix.stderr
            assert sorted(pmix.stdout.split()) == ["0", "1"], pmix.stdout
            check = cli("validate", "--nccl", "--sandbox-dir", str(workdir), timeout=600)
            assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    finally:
        down = cli("sandbox", "down", "--workdir", str(workdir))
    assert down.returncode == 0, down.stderr
    assert report.leftovers(workdir) == []
