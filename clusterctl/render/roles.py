"""A Slurm cluster's rendered files, once per program run: the Slurm files every role carries, the
scripts each node role gets and the scripts the scheduler's Run Commands carry. The Pulumi program
(components/azure/slurm), `plan --out` (bundle.py) and the resize's config sync all read this one
plan, so each file is rendered once; only the user-data, which holds the deploy-time secrets (munge
key, database password, storage account, identity), is put together per role from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from clusterctl.render.scripts import mounts_script, node_scripts
from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import partition_sku, render_config_sync, render_slurm
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.model import ClusterSpec

SCHEDULER = "scheduler"
"""The role name of the scheduler; a GPU node's role is its partition's name."""
LOGIN = "login-nodes"
"""The role name of the login nodes (a hyphen, which no partition name has): a subset of the
scheduler's scripts and the GPU nodes' mount wait."""

LOGIN_SCRIPTS = frozenset(
    {
        "gpucl-pyxis.sh",
        "gpucl-build-cache.sh",
        "gpucl-users.sh",
        "gpucl-hosts.sh",
        "gpucl-known-hosts.sh",
    }
)
"""A login node builds (or takes from the cluster's cache) pyxis, so sbatch and srun there accept
its container options, has the team's users, Slurm's node names and the nodes' SSH host keys; it
runs no Slurm daemon."""


@dataclass(frozen=True)
class RolePlan:
    """One node role's rendered scripts (libexec), before any secret is known."""

    role: str
    scripts: Mapping[str, str]


@dataclass(frozen=True)
class SlurmPlan:
    """Everything rendered for a Slurm cluster that no deploy-time secret changes."""

    stack: str
    slurm_files: Mapping[str, str]
    """slurm.conf, gres.conf, cgroup.conf, topology.conf, plugstack.conf: the same on every role."""
    roles: Mapping[str, RolePlan]
    """The scheduler's (SCHEDULER), the login nodes' (LOGIN) and each partition's (by name)."""
    config_sync: str
    """The Run Command a resize brings to the scheduler: the synced Slurm files, reconfigure."""
    resize_drain: str
    """The Run Command that drains the nodes a shrink removes, before any scale set changes."""

    def role(self, name: str) -> RolePlan:
        return self.roles[name]


def plan_slurm(spec: ClusterSpec, stack: str, cat: Catalog | None = None) -> SlurmPlan:
    """Render the cluster's secret-free files once (the caller keeps the plan for the run)."""
    cat = cat or catalog()
    site = cloud_site(spec)
    slurm = MappingProxyType(render_slurm(spec, site, stack, cat))
    scheduler = node_scripts(spec, site, None)
    login = {k: v for k, v in scheduler.items() if k in LOGIN_SCRIPTS} | mounts_script(spec)
    roles = {
        SCHEDULER: RolePlan(SCHEDULER, MappingProxyType(scheduler)),
        LOGIN: RolePlan(LOGIN, MappingProxyType(dict(sorted(login.items())))),
    }
    for part in spec.partitions:
        scripts = node_scripts(spec, site, partition_sku(part, cat), part)
        roles[part.name] = RolePlan(part.name, MappingProxyType(scripts))
    return SlurmPlan(
        stack=stack,
        slurm_files=slurm,
        roles=MappingProxyType(roles),
        config_sync=render_config_sync(spec, stack, cat, slurm_files=slurm),
        resize_drain=render_config_sync(spec, stack, cat, slurm_files=slurm, drain_only=True),
    )
