"""Node health: Slurm's HealthCheckProgram and the NHC configurations of the fast and deep tiers,
with the per-SKU floors they check."""

from __future__ import annotations

from typing import Any

from clusterctl.render.paths import HEALTH_ENV, NHC_FAST_CONF, SCRATCH
from clusterctl.render.site import SlurmSite, scheduler_host
from clusterctl.render.storage import home_source_pattern
from clusterctl.render.templates import render_template
from clusterctl.render.versions import node_versions
from clusterctl.spec.catalog import Catalog, Sku
from clusterctl.spec.model import ClusterSpec


def health_script(
    spec: ClusterSpec,
    site: SlurmSite,
    check_cmd: str = "/usr/sbin/nhc",
    preamble: str = "",
) -> str:
    """Slurm's HealthCheckProgram; `preamble` lets the sandbox swap NHC for its own checks."""
    return render_template(
        "scripts/gpucl-health.sh.j2",
        drain_prefix=spec.health_checks.drain_prefix,
        health_env=HEALTH_ENV,
        check_cmd=check_cmd,
        preamble=preamble,
    )


def _nhc_context(spec: ClusterSpec, sku: Sku, cat: Catalog) -> dict[str, Any]:
    baseline = sku.baseline(1)
    profile = cat.profile(sku)
    ib = sku.fabric.kind == "infiniband"
    size = baseline.message_bytes if baseline and baseline.message_bytes else 1 << 34
    return dict(
        sku=sku,
        v=node_versions(cat),
        nccl_floor=baseline.fail_below_gbps if baseline else 0,
        nccl_bytes=size,
        nccl_size=f"{size >> 30}G",
        nccl_source=baseline.source if baseline else "no published baseline",
        home_source=home_source_pattern(spec, scheduler_host(spec)),
        sched_source=f"{scheduler_host(spec)}:/shared/sched",
        scratch=SCRATCH,
        ib_ports=[f"mlx5_ib{i}:1" for i in range(sku.fabric.nics)] if ib else [],
        ib_rate=int(sku.fabric.gbps_per_nic or 0),
        ib_gdr_floor=_gdr_floor(sku) if ib else 0,
        physmem=sku.guest_memory,
        topo_file=(profile.topo_file if profile and profile.topo_file else "none"),
    )


def _gdr_floor(sku: Sku) -> float:
    """Azure's own per-SKU floor (180 on HDR A100 v4, 380 on H100, 360 on H200), not a share of
    line rate: a floor stricter than Azure's drains healthy nodes."""
    if sku.fabric.gdr_floor_gbps is None:
        raise LookupError(f"config/skus.yaml {sku.name}: fabric.gdrFloorGbps missing (InfiniBand)")
    return sku.fabric.gdr_floor_gbps


def render_nhc_conf(spec: ClusterSpec, sku: Sku, cat: Catalog, *, mig_instances: int = 0) -> str:
    """The fast tier: what the periodic health check runs on every node; `mig_instances`: the
    MIG instances each GPU must show (0: MIG must be off)."""
    return render_template(
        "nhc/nhc.conf.j2",
        conf_path=NHC_FAST_CONF,
        mig_instances=mig_instances,
        **_nhc_context(spec, sku, cat),
    )


def render_nhc_deep_conf(spec: ClusterSpec, sku: Sku, cat: Catalog) -> str:
    """The deep tier: Azure's slow checks, for an idle node in an exclusive allocation only."""
    return render_template("nhc/deep.conf.j2", **_nhc_context(spec, sku, cat))


def render_nhc_checks() -> str:
    return render_template("nhc/gpucl.nhc.j2")
