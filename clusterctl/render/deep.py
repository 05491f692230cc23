"""The deep health tier: what the scheduler's timer and the GPU nodes' job script are told.

Azure's slow checks (single-node NCCL all-reduce against the SKU floor, GPUDirect bandwidth) run
through the HPC image's own runner, never beside a job: the scheduler's gpucl-deep-health.timer
submits one exclusive, low-priority job per idle GPU node (templates/scripts/gpucl-deep-*.sh.j2).
"""

from __future__ import annotations

from typing import Any

from clusterctl.render.site import SlurmSite
from clusterctl.spec.model import ClusterSpec

NHC_DEEP_CONF = "/etc/nhc/gpucl-deep.conf"
DEEP_RUNNER = "/opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh"
"""Where the Azure HPC image keeps azurehpc-health-checks (Azure/azhpc-images; Azure/az-hop's
cluster-init health check calls it there with -c CONF)."""
DEEP_BUDGET_S = 1800
"""The deep tier's own time budget: Azure's NCCL and GPUDirect bandwidth checks take minutes."""


def deep_prefix(spec: ClusterSpec) -> str:
    """Deep-tier drains: `gpucl-deep:` for `gpucl:`, a prefix the fast tier never resumes."""
    return spec.health_checks.drain_prefix[:-1] + "-deep:"


def deep_hours(spec: ClusterSpec) -> int:
    """The deep tier's interval; 0 (off) with healthChecks.enabled false: neither tier runs."""
    hc = spec.health_checks
    return hc.deep_interval_hours if hc.enabled else 0


def deep_context(spec: ClusterSpec, site: SlurmSite) -> dict[str, Any]:
    return {
        "deep_hours": deep_hours(spec),
        "deep_prefix": deep_prefix(spec),
        "deep_runner": DEEP_RUNNER,
        "deep_conf": NHC_DEEP_CONF,
        "deep_budget_s": DEEP_BUDGET_S,
        "deep_budget_min": DEEP_BUDGET_S // 60 + 5,
        "log_dir": site.log_dir,
    }
