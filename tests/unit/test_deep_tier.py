"""The deep health tier's two rendered scripts, run by bash against stand-in Slurm commands and a
stand-in azurehpc-health-checks runner (issue 12): the scheduler's round submits an exclusive
job to idle nodes only; the node's job drains with its own prefix on a failure, never touches
someone else's drain, and the fast tier's prefix never matches it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from clusterctl.plan.program import make_plan
from clusterctl.render.deep import deep_prefix
from clusterctl.render.engine import cloud_site, node_scripts, partition_sku
from clusterctl.spec.catalog import catalog


@pytest.fixture(scope="module")
def scripts() -> dict[str, str]:
    spec = make_plan("azure-h100").spec
    site = cloud_site(spec)
    sku = partition_sku(spec.partitions[0], catalog())
    return {**node_scripts(spec, site, None), **node_scripts(spec, site, sku)}


def stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/bash\n" + body + "\n")
    path.chmod(0o755)


def run(tmp_path: Path, script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "script.sh"
    path.write_text(script)
    environ = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", **env}
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, env=environ)


def test_the_deep_prefix_is_not_the_fast_tiers(scripts) -> None:
    spec = make_plan("azure-h100").spec
    assert deep_prefix(spec) == "gpucl-deep:"
    assert not deep_prefix(spec).startswith(spec.health_checks.drain_prefix)


def test_the_round_submits_to_idle_nodes_only(tmp_path, scripts) -> None:
    bins = tmp_path / "bin"
    bins.mkdir()
    stub(
        bins,
        "sinfo",
        "printf 'gpu-pg0-1 idle gpu*\\ngpu-pg0-2 allocated gpu*\\n"
        "gpu-pg0-3 idle~ gpu*\\ngpu-pg0-4 drained gpu*\\ngpu-pg0-5 idle gpu*\\n'",
    )
    stub(bins, "squeue", 'case "$*" in *gpu-pg0-2*RUNNING*) echo 42;; esac')
    stub(bins, "sbatch", f'echo "$@" >> {tmp_path}/sbatch.log; echo 7')
    log = tmp_path / "deep.log"
    proc = run(tmp_path, scripts["gpucl-deep-health.sh"], {"GPUCL_DEEP_LOG": str(log)})
    assert proc.returncode == 0, proc.stderr
    text = log.read_text()
    assert "gpu-pg0-2 skipped: allocated (job 42)" in text
    assert "gpu-pg0-3 skipped: idle~" in text and "gpu-pg0-4 skipped: drained" in text
    submitted = (tmp_path / "sbatch.log").read_text().splitlines()
    assert [line.split("-w ")[1].split()[0] for line in submitted] == ["gpu-pg0-1", "gpu-pg0-5"]
    for line in submitted:
        assert "--exclusive" in line and "-p gpu " in line and "--no-requeue" in line
        assert "--deadline=now+24hours" in line and "gpucl-deep-check.sh" in line


@pytest.mark.parametrize(
    ("runner_rc", "state", "drains"),
    [(0, "idle", False), (1, "allocated", True), (1, "allocated+drain", False)],
)
def test_the_node_job_drains_with_its_own_prefix_and_only_undrained_nodes(
    tmp_path, scripts, runner_rc: int, state: str, drains: bool
) -> None:
    bins = tmp_path / "bin"
    bins.mkdir()
    runner = tmp_path / "run-health-checks.sh"
    runner.write_text(
        "#!/bin/bash\necho 'check_ib_bw_gdr 380: passed'\n"
        + (
            "echo 'ERROR:  nhc:  Health check failed:  check_nccl_allreduce 460.0 1 16G x: "
            "412 GB/s'\n"
            if runner_rc
            else ""
        )
        + f"exit {runner_rc}\n"
    )
    runner.chmod(0o755)
    stub(bins, "sinfo", f"echo {state}")
    stub(bins, "scontrol", f'echo "$@" >> {tmp_path}/scontrol.log')
    stub(bins, "logger", "true")
    env = {"GPUCL_DEEP_RUNNER": str(runner), "SLURMD_NODENAME": "gpu-pg0-2"}
    proc = run(tmp_path, scripts["gpucl-deep-check.sh"], env)
    assert proc.returncode == runner_rc, proc.stdout + proc.stderr
    calls = (tmp_path / "scontrol.log").read_text() if (tmp_path / "scontrol.log").exists() else ""
    if drains:
        assert calls.strip() == (
            "update nodename=gpu-pg0-2 state=drain reason=gpucl-deep: check_nccl_allreduce "
            "460.0 1 16G x: 412 GB/s"
        )
    else:
        assert calls == ""
