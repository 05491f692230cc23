"""Every file a cluster's nodes or Kubernetes get, as `{path: text}`: what `plan --out` writes."""

from __future__ import annotations

from clusterctl.catalog import catalog
from clusterctl.render import partition_sku, render_nccl_conf, render_slurm
from clusterctl.site import SlurmSite
from clusterctl.spec import ClusterSpec


def render_bundle(spec: ClusterSpec, stack: str) -> dict[str, str]:
    cat = catalog()
    files: dict[str, str] = {}
    if spec.scheduler == "slurm":
        for rel, text in render_slurm(spec, SlurmSite(), stack, cat).items():
            files[f"slurm/{rel}"] = text
    for part in spec.partitions:
        sku = partition_sku(part, cat)
        files[f"nodes/{part.name}/nccl.conf"] = render_nccl_conf(sku, cat)
    return files
