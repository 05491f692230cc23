"""One Slurm package channel and one release on every role: the scheduler and the GPU
nodes name the same apt source (replacing the HPC image's slurm.list), pin the same version and
hold it."""

from __future__ import annotations

import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.spec.load import load_stack_spec


def test_every_role_has_the_same_slurm_source_version_and_hold() -> None:
    spec, _ = load_stack_spec("azure-h100")
    roles = {
        "scheduler": render_cloud_init(spec, "azure-h100", munge_key_b64="eA=="),
        "gpu": render_cloud_init(
            spec, "azure-h100", munge_key_b64="eA==", partition=spec.partitions[0]
        ),
    }
    docs = {role: yaml.safe_load(text) for role, text in roles.items()}
    sources = {role: doc["apt"]["sources"]["slurm.list"]["source"] for role, doc in docs.items()}
    assert len(set(sources.values())) == 1 and "slurm-ubuntu" in sources["gpu"]
    versions = {
        role: {p[1] for p in doc["packages"] if isinstance(p, list) and p[0].startswith("slurm")}
        for role, doc in docs.items()
    }
    assert versions["scheduler"] == versions["gpu"] and len(versions["gpu"]) == 1
    for doc in docs.values():
        assert any("apt-mark hold" in str(cmd) for cmd in doc["runcmd"])
