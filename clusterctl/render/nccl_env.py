"""A GPU node's NCCL settings from its SKU's profile: /etc/nccl.conf for NCCL's own variables, the
job environment for the rest."""

from __future__ import annotations

from clusterctl.render.templates import render_template
from clusterctl.spec.catalog import Catalog, Sku


def _split_profile_env(sku: Sku, cat: Catalog) -> tuple[dict[str, str], dict[str, str]]:
    """(NCCL's own variables, the rest). NCCL reads /etc/nccl.conf once, at its first call, and
    setenv()s every line it has not been given (NVIDIA/nccl src/misc/param.cc setEnvFile; NCCL
    docs, Environment Variables): CUDA_DEVICE_ORDER, UCX_* and OMPI_MCA_* put there reach the
    process after CUDA and MPI_Init have read them, i.e. never. They go to the job environment."""
    profile = cat.profile(sku)
    env = dict(sorted(profile.env.items())) if profile else {}
    nccl = {k: v for k, v in env.items() if k.startswith("NCCL_")}
    return nccl, {k: v for k, v in env.items() if k not in nccl}


def render_nccl_conf(sku: Sku, cat: Catalog) -> str:
    profile = cat.profile(sku)
    return render_template(
        "nccl/nccl.conf.j2",
        sku=sku,
        env=_split_profile_env(sku, cat)[0],
        source=profile.source if profile else None,
    )


def render_job_env(sku: Sku, cat: Catalog) -> str:
    """The profile's variables for their own readers (CUDA, UCX, Open MPI, libfabric)."""
    return render_template("nccl/job.env.j2", sku=sku, env=_split_profile_env(sku, cat)[1])
