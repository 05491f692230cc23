"""Where a Slurm cluster's files and daemons live on its nodes: paths, ports, plugins.

The Slurm templates are rendered from a spec plus this. The sandbox boots the same user-data, so
nothing here differs for it (its substitutions are declared in clusterctl/sandbox/vm).
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.spec.model import ClusterSpec, HealthChecksSpec, default_of


@dataclass(frozen=True)
class SlurmSite:
    controller_host: str = "scheduler"
    """Short hostname of the slurmctld host (SlurmctldHost)."""
    slurm_user: str = "slurm"
    etc_dir: str = "/etc/slurm"
    state_dir: str = "/shared/spool/slurmctld"
    """StateSaveLocation on the scheduler's protected data disk (mounted at /shared, not exported):
    a re-created scheduler finds its queue, node states, drains and reservations there."""
    spool_dir: str = "/var/spool/slurmd"
    log_dir: str = "/var/log/slurm"
    run_dir: str = "/run/slurm"
    health_check_program: str = "/usr/sbin/nhc"
    health_check_interval_s: int = default_of(HealthChecksSpec, "interval_seconds")
    libexec_dir: str = "/usr/local/libexec/gpu-clusters"
    """Where our prolog/epilog/resume scripts live."""
    slurmctld_port: int = 6817
    slurmd_port: int = 6818
    cgroup_plugin: str = "autodetect"
    proctrack: str = "proctrack/cgroup"
    task_plugins: str = "task/affinity,task/cgroup"


def scheduler_host(spec: ClusterSpec) -> str:
    return f"{spec.name}-scheduler"


def cloud_site(spec: ClusterSpec) -> SlurmSite:
    return SlurmSite(
        controller_host=scheduler_host(spec),
        health_check_program="/usr/local/libexec/gpu-clusters/gpucl-health.sh",
        health_check_interval_s=spec.health_checks.interval_seconds,
    )
