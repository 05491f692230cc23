"""The deep health tier's two rendered scripts, run by bash against stand-in Slurm commands and a
stand-in azurehpc-health-checks runner: the scheduler's round submits an exclusive
job to idle nodes only; the node's job drains with its own prefix on a failure, never touches
someone else's drain, and the fast tier's prefix never matches it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from clusterctl.plan.program import make_plan
from clusterctl.render.deep import deep_prefix
from clusterctl.render.scripts import node_scripts
from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import partition_sku
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


def deep_env(tmp_path: Path, runner: Path, dcgm_status: str) -> dict[str, str]:
    """The node job's environment: the stand-in runner, a config file, and a dcgmi whose
    level-2 report has one memory test with `dcgm_status` (and records its arguments)."""
    conf = tmp_path / "gpucl-deep.conf"
    conf.write_text("* || check_ib_bw_gdr 380\n")
    dcgmi = tmp_path / "dcgmi"
    report = (
        '{"DCGM GPU Diagnostic":{"test_categories":[{"category":"Hardware","tests":'
        f'[{{"name":"memory","results":[{{"gpu_id":"0","status":"Pass"}},'
        f'{{"gpu_id":"3","status":"{dcgm_status}"}}]}}]}}]}}}}'
    )
    dcgmi.write_text(f"#!/bin/bash\necho \"$@\" > {tmp_path}/dcgmi.args\necho '{report}'\n")
    dcgmi.chmod(0o755)
    return {
        "GPUCL_DEEP_RUNNER": str(runner),
        "GPUCL_DEEP_CONF": str(conf),
        "GPUCL_DEEP_RUNNER_LOG": str(tmp_path / "runner.log"),
        "GPUCL_DCGMI": str(dcgmi),
        "SLURMD_NODENAME": "gpu-pg0-2",
    }


def run(tmp_path: Path, script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "script.sh"
    path.write_text(script)
    environ = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", **env}
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, env=environ)


# `scontrol show hostnames` for `prefix-[a-b]` and comma lists, as the round uses it
HOSTNAMES = r"""[ "$1 $2" = "show hostnames" ] || exit 1
for part in ${3//,/ }; do
  if [[ $part =~ ^(.*)\[([0-9]+)-([0-9]+)\]$ ]]; then
    for ((i = BASH_REMATCH[2]; i <= BASH_REMATCH[3]; i++)); do echo "${BASH_REMATCH[1]}$i"; done
  else echo "$part"; fi
done"""


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
    stub(bins, "squeue", "echo '42|train|RUNNING|gpu-pg0-[2-3]|'")
    stub(bins, "scontrol", HOSTNAMES)
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


def test_the_round_asks_squeue_once_and_skips_a_node_whose_check_is_pending(
    tmp_path, scripts
) -> None:
    """Forty nodes, one squeue for the round (not one per node); a deep check still pending has no
    allocated nodes, so the node it asked for (%n) says it is queued."""
    bins = tmp_path / "bin"
    bins.mkdir()
    rows = "".join(f"gpu-pg0-{n} {'idle' if n > 10 else 'allocated'} gpu*\\n" for n in range(1, 41))
    stub(bins, "sinfo", f"printf '{rows}'")
    stub(
        bins,
        "squeue",
        f'echo "$*" >> {tmp_path}/squeue.log\n'
        "printf '42|train|RUNNING|gpu-pg0-[1-10]|\\n77|gpucl-deep|PENDING||gpu-pg0-12\\n'",
    )
    stub(bins, "scontrol", HOSTNAMES)
    stub(bins, "sbatch", f'echo "$@" >> {tmp_path}/sbatch.log; echo 7')
    log = tmp_path / "deep.log"
    proc = run(tmp_path, scripts["gpucl-deep-health.sh"], {"GPUCL_DEEP_LOG": str(log)})
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "squeue.log").read_text().splitlines()) == 1
    text = log.read_text()
    assert "gpu-pg0-7 skipped: allocated (job 42)" in text
    assert "gpu-pg0-12 skipped: a deep check is queued already (job 77)" in text
    submitted = [line.split("-w ")[1].split()[0]
                 for line in (tmp_path / "sbatch.log").read_text().splitlines()]  # fmt: skip
    assert sorted(submitted) == sorted(f"gpu-pg0-{n}" for n in range(11, 41) if n != 12)


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
    env = deep_env(tmp_path, runner, dcgm_status="Pass")
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


def _passing_runner(tmp_path: Path) -> Path:
    runner = tmp_path / "run-health-checks.sh"
    runner.write_text(f'#!/bin/bash\necho "$@" > {tmp_path}/runner.args\necho passed\n')
    runner.chmod(0o755)
    return runner


def test_the_runner_gets_a_watchdog_for_the_whole_budget_and_a_log(tmp_path, scripts) -> None:
    # run-health-checks.sh's -t is NHC's watchdog for the whole run and defaults to 500 s: an
    # NCCL plus GPUDirect round would be cut short and drain a healthy node
    from clusterctl.render.deep import NHC_TIMEOUT_S

    (tmp_path / "bin").mkdir()
    env = deep_env(tmp_path, _passing_runner(tmp_path), dcgm_status="Pass")
    proc = run(tmp_path, scripts["gpucl-deep-check.sh"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    args = (tmp_path / "runner.args").read_text().split()
    assert args == [
        "-c",
        env["GPUCL_DEEP_CONF"],
        "-t",
        str(NHC_TIMEOUT_S),
        "-o",
        env["GPUCL_DEEP_RUNNER_LOG"],
    ]
    assert NHC_TIMEOUT_S > 500
    assert (tmp_path / "dcgmi.args").read_text().split() == ["diag", "-r", "2", "-j"]
    assert "dcgm diag level 2 passed" in proc.stdout


def test_a_missing_deep_config_is_not_run_as_azures_default(tmp_path, scripts) -> None:
    # without its -c file the runner would fall back to Azure's SKU conf (or pass on a SKU it
    # does not know): the job stops instead, and drains nothing
    bins = tmp_path / "bin"
    bins.mkdir()
    stub(bins, "scontrol", f'echo "$@" >> {tmp_path}/scontrol.log')
    env = deep_env(tmp_path, _passing_runner(tmp_path), dcgm_status="Pass")
    env["GPUCL_DEEP_CONF"] = str(tmp_path / "absent.conf")
    proc = run(tmp_path, scripts["gpucl-deep-check.sh"], env)
    assert proc.returncode == 2 and "absent.conf missing" in proc.stdout
    assert not (tmp_path / "runner.args").exists() and not (tmp_path / "scontrol.log").exists()


@pytest.mark.parametrize(
    ("dcgm", "reason"),
    [
        ("Fail", "gpucl-deep: dcgm diag level 2 failed: memory"),
        ("not json", "gpucl-deep: dcgm diag level 2: exited 0 without a JSON report: not json"),
    ],
)
def test_a_failed_dcgm_diagnostic_drains_with_the_test_that_failed(
    tmp_path, scripts, dcgm: str, reason: str
) -> None:
    bins = tmp_path / "bin"
    bins.mkdir()
    stub(bins, "sinfo", "echo idle")
    stub(bins, "scontrol", f'echo "$@" >> {tmp_path}/scontrol.log')
    stub(bins, "logger", "true")
    env = deep_env(tmp_path, _passing_runner(tmp_path), dcgm_status=dcgm)
    if dcgm == "not json":
        Path(env["GPUCL_DCGMI"]).write_text("#!/bin/bash\necho 'not json'\n")
    proc = run(tmp_path, scripts["gpucl-deep-check.sh"], env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    calls = (tmp_path / "scontrol.log").read_text().strip()
    assert calls == f"update nodename=gpu-pg0-2 state=drain reason={reason}"
