"""A local Slurm cluster on real daemons, one network namespace per node, for e2e tests.

site = sandbox_site(nodes, workdir)
files = render_slurm(spec, site)          # or any slurm.conf/gres.conf/cgroup.conf
up(files, nodes, workdir=workdir, site=site)
exec(workdir, ["srun", "-N4", "hostname"])
down(workdir)
"""

from .faults import (
    clear_health_check,
    clear_link,
    fail_health_check,
    kill_slurmd,
    run_health_check,
    slow_link,
)
from .layout import sandbox_site
from .node_state import node_info, resume_our_drains
from .runtime import SandboxStatus, down, exec, exec_on_node, ssh_argv, status, up
from .state import SandboxError, SandboxState

__all__ = [
    "SandboxError",
    "SandboxState",
    "SandboxStatus",
    "clear_health_check",
    "clear_link",
    "down",
    "exec",
    "exec_on_node",
    "fail_health_check",
    "kill_slurmd",
    "node_info",
    "resume_our_drains",
    "run_health_check",
    "sandbox_site",
    "slow_link",
    "ssh_argv",
    "status",
    "up",
]
