"""/etc/nccl.conf holds only what NCCL reads from it. NCCL setenv()s that file's
lines when it initializes (NVIDIA/nccl src/misc/param.cc setEnvFile), after CUDA has read
CUDA_DEVICE_ORDER and MPI_Init has read UCX_* and OMPI_MCA_*; those go to the job environment,
exported by Slurm's TaskProlog into each task the job has not set them for."""

from __future__ import annotations

import os
import subprocess

import pytest

from clusterctl.plan.program import make_plan
from clusterctl.render.bundle import render_bundle
from clusterctl.render.paths import JOB_ENV
from clusterctl.render.scripts import node_scripts
from clusterctl.render.site import cloud_site
from clusterctl.spec.catalog import catalog


def _keys(text: str) -> dict[str, str]:
    return dict(ln.split("=", 1) for ln in text.splitlines() if ln and not ln.startswith("#"))


@pytest.mark.parametrize("stack", ["azure-h100", "azure-a100"])
def test_nccl_conf_holds_nccl_variables_and_the_job_env_the_rest(stack: str) -> None:
    spec = make_plan(stack, []).spec
    files = render_bundle(spec, stack)
    for part in spec.partitions:
        nccl = _keys(files[f"nodes/{part.name}/nccl.conf"])
        job = _keys(files[f"nodes/{part.name}/job.env"])
        assert nccl and all(k.startswith("NCCL_") for k in nccl), sorted(nccl)
        assert not any(k.startswith("NCCL_") for k in job), sorted(job)
        profile = catalog().profile(catalog().get(part.sku))
        assert {**nccl, **job} == dict(profile.env)  # each variable lands in exactly one place
        assert "CUDA_DEVICE_ORDER" in job
    slurm_conf = files["slurm/slurm.conf"]
    prolog = next(ln for ln in slurm_conf.splitlines() if ln.startswith("TaskProlog="))
    installed = {f"{cloud_site(spec).libexec_dir}/{n}" for n in _gpu_scripts(spec)}
    assert prolog.split("=", 1)[1] in installed


def _gpu_scripts(spec) -> dict[str, str]:
    return node_scripts(spec, cloud_site(spec), catalog().get(spec.partitions[0].sku))


def test_the_task_prolog_exports_what_the_job_has_not_set(tmp_path) -> None:
    spec = make_plan("azure-h100", []).spec
    prolog = tmp_path / "task-env.sh"
    prolog.write_text(_gpu_scripts(spec)["gpucl-task-env.sh"])
    env_file = tmp_path / "job.env"
    env_file.write_text("# comment\nCUDA_DEVICE_ORDER=PCI_BUS_ID\nUCX_NET_DEVICES=mlx5_ib0:1\n")
    env = {"PATH": os.environ["PATH"], "GPUCL_JOB_ENV": str(env_file), "UCX_NET_DEVICES": "mine"}
    out = subprocess.run(["bash", str(prolog)], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["export CUDA_DEVICE_ORDER=PCI_BUS_ID"]
    assert JOB_ENV in prolog.read_text()
