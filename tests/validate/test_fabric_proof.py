"""Live runs always carry the fabric proof: the Slurm job and the MPIJob run NCCL with
the INFO subsystems the judge reads, whatever the SKU profile or the user's environment says, and
the Kubernetes jobs' logs go through the same per-host judge as a Slurm run's."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from clusterctl.validate.k8s_launcher import build_mpijob
from clusterctl.validate.run import Options, _pair_manifest, validate_k8s
from clusterctl.validate.slurm_launcher import pair_job, render_sbatch
from clusterctl.validate.targets import launcher_for_sku
from tests.data.nccl.derive_fabric_margin import efa_log, ib_log
from tests.validate.test_k8s import RecordedClient, target
from tests.validate.test_slurm import h100_job

NOISY = {"NCCL_DEBUG": "WARN", "NCCL_DEBUG_SUBSYS": "COLL", "NCCL_DEBUG_FILE": "/tmp/n.%h.%p"}


def env_at_srun(script: str, tmp_path: Path) -> dict[str, str]:
    """Run the batch script with a stand-in `srun` that prints the environment it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    srun = bin_dir / "srun"
    srun.write_text("#!/bin/sh\nenv\n")
    srun.chmod(0o755)
    path = tmp_path / "job.sbatch"
    path.write_text(script)
    environ = {"PATH": f"{bin_dir}:{os.environ['PATH']}", **NOISY}  # the user's shell, too
    out = subprocess.run(["bash", str(path)], capture_output=True, text=True, env=environ)
    assert out.returncode == 0, out.stderr
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)


@pytest.mark.parametrize("pair", [False, True], ids=["run", "pair"])
def test_the_slurm_job_runs_nccl_with_the_info_lines_in_its_output(tmp_path, pair) -> None:
    job = h100_job(container_image="nvcr.io/nvidia/pytorch:24.07-py3")
    job = replace(job, env={**job.env, **NOISY})  # a profile or stack that says otherwise
    if pair:
        job = pair_job(job, "gpu-1", "gpu-2")
    env = env_at_srun(render_sbatch(job, "o.out"), tmp_path)
    assert (env["NCCL_DEBUG"], env["NCCL_DEBUG_SUBSYS"]) == ("INFO", "INIT,NET,ENV")
    assert "NCCL_DEBUG_FILE" not in env


@pytest.mark.parametrize("sku", ["Standard_ND96isr_H100_v5", "p5.48xlarge"])
def test_the_mpijob_runs_nccl_with_the_info_lines_in_the_launchers_log(sku) -> None:
    launcher = launcher_for_sku(sku, 2)
    launcher = {**launcher, "env": {**launcher.get("env", {}), **NOISY}}
    for manifest in (build_mpijob(launcher), _pair_manifest(launcher, Options())):
        spec = manifest["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
        (c,) = spec["containers"]
        env = {e["name"]: e["value"] for e in c["env"]}
        assert (env["NCCL_DEBUG"], env["NCCL_DEBUG_SUBSYS"]) == ("INFO", "INIT,NET,ENV")
        assert "NCCL_DEBUG_FILE" not in env
        forwarded = [c["args"][i + 1] for i, a in enumerate(c["args"]) if a == "-x"]
        assert {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS"} <= set(forwarded)
        assert "NCCL_DEBUG_FILE" not in forwarded


def k8s_outcome(sku: str, log: str, monkeypatch, default_log: str | None = None):
    """`log` from the Ring MPIJob; the default-algorithm MPIJob prints `default_log`, by default
    a healthy one for the SKU (at its published default-algorithm figure)."""
    from functools import partial

    import clusterctl.validate.k8s_launcher as k8s

    if default_log is None:
        default_log = efa_log(487.1) if sku.startswith("p5") else ib_log(469.1)
    monkeypatch.setattr(k8s, "K8sLauncher", partial(k8s.K8sLauncher, sleep=lambda _: None))
    client = RecordedClient("succeeded")

    def pod_log(namespace, pod):
        default = client.created is not None and client.created["metadata"]["name"].endswith(
            "-default"
        )
        return default_log if default else log

    client.pod_log = pod_log  # type: ignore[method-assign]
    return validate_k8s(target(sku), Options(), client=client)


def reasons(outcome) -> list[str]:
    return [r for v in outcome.verdicts for r in v.reasons]


@pytest.mark.parametrize(
    ("sku", "log", "status", "reason"),
    [
        ("p5.48xlarge", efa_log(360.0, nics={"ip-10-1-45-213": 31}), "fail",
         "ip-10-1-45-213: 31 of 32 EFA NICs"),
        ("p5.48xlarge", efa_log(330.0, nics={"ip-10-1-18-77": 28}), "fail",
         "ip-10-1-18-77: 28 of 32 EFA NICs"),
        ("p5.48xlarge", efa_log(368.0, gdr={"ip-10-1-18-77": False}), "fail",
         "ip-10-1-18-77: no GPUDirect RDMA"),
        ("Standard_ND96isr_H100_v5", ib_log(338.0, devices={"h100-0": list(range(7))}), "fail",
         "h100-0: 7 of 8 IB devices, mlx5_ib7 missing"),
        ("p5.48xlarge", efa_log(368.5), "pass", None),
        ("Standard_ND96isr_H100_v5", ib_log(380.0), "pass", None),
    ],
)  # fmt: skip
def test_kubernetes_logs_get_the_same_per_host_judge(sku, log, status, reason, monkeypatch) -> None:
    outcome = k8s_outcome(sku, log, monkeypatch)
    assert outcome.status == status, reasons(outcome)
    if reason:
        assert reasons(outcome)[0].startswith(reason)
    (v,) = outcome.verdicts
    assert v.expect is not None and len(v.fabric) == 2
