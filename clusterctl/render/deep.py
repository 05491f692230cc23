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
NHC_TIMEOUT_S = 1200
"""NHC's watchdog for the runner's whole run (run-health-checks.sh -t; its own default is 500 s):
Azure's NCCL all-reduce and GPUDirect bandwidth checks take minutes."""
RUNNER_TIMEOUT_S = NHC_TIMEOUT_S + 60
"""The runner itself, with a minute for its container to start and stop."""
DCGM_BUDGET_S = 540
"""`dcgmi diag -r 2` on 8 GPUs (level 2 runs a few minutes)."""
DEEP_BUDGET_S = RUNNER_TIMEOUT_S + DCGM_BUDGET_S
"""The deep tier's own time budget, the node job's limit (plus a margin)."""


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
        "nhc_timeout_s": NHC_TIMEOUT_S,
        "runner_timeout_s": RUNNER_TIMEOUT_S,
        "runner_log": f"{site.log_dir}/gpucl-deep-runner.log",
        "dcgm_budget_s": DCGM_BUDGET_S,
        "deep_budget_min": DEEP_BUDGET_S // 60 + 5,
        "log_dir": site.log_dir,
        # the deep tier's NCCL all-reduce and DCGM diagnostic need whole GPUs; a MIG partition's
        # GPUs are slices (NCCL cannot join MIG instances), so its nodes would fail it and drain
        "deep_skip": [p.name for p in spec.partitions if p.sharing and p.sharing.mig],
    }
