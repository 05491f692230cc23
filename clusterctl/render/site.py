"""Where a Slurm cluster's files and daemons live: the cloud nodes or the local sandbox.

The Slurm templates are rendered from a spec plus one of these, so the sandbox boots the same
slurm.conf the cloud nodes get, with only these host-specific values swapped.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SlurmSite:
    controller_host: str = "scheduler"
    """Short hostname of the slurmctld host (SlurmctldHost)."""
    controller_addr: str | None = None
    """Address of the controller when the hostname does not resolve (sandbox)."""
    node_addrs: dict[str, str] = field(default_factory=dict)
    """NodeAddr per node name; empty in the cloud, where names resolve through Azure DNS."""
    slurm_user: str = "slurm"
    etc_dir: str = "/etc/slurm"
    state_dir: str = "/shared/spool/slurmctld"
    """StateSaveLocation on the scheduler's protected data disk (mounted at /shared, not exported):
    a re-created scheduler finds its queue, node states, drains and reservations there."""
    spool_dir: str = "/var/spool/slurmd"
    log_dir: str = "/var/log/slurm"
    run_dir: str = "/run/slurm"
    munge_socket: str | None = None
    """AuthInfo socket; None keeps munge's default socket."""
    health_check_program: str = "/usr/sbin/nhc"
    health_check_interval_s: int = 300
    libexec_dir: str = "/usr/local/libexec/gpu-clusters"
    """Where our prolog/epilog/resume scripts live."""
    config_overrides: bool = False
    """SlurmdParameters=config_overrides: lets a small host pose as a GPU node (sandbox only)."""
    slurmctld_port: int = 6817
    slurmd_port: int = 6818
    cloud_power_saving: bool = True
    """Nodes start in State=CLOUD with power saving (cloud); the sandbox boots them powered up."""
    configless: bool = True
    """SlurmctldParameters=enable_configless: slurmd fetches its config from slurmctld (cloud);
    the namespace sandbox writes the files for every daemon itself."""
    cgroup_plugin: str = "autodetect"
    proctrack: str = "proctrack/cgroup"
    task_plugins: str = "task/affinity,task/cgroup"
