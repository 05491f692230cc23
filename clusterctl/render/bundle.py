"""Every file a cluster's nodes or Kubernetes get, as `{path: text}`: what `plan --out` writes."""

from __future__ import annotations

from collections.abc import Callable

from clusterctl.platform import disk_backup
from clusterctl.render.health import render_nhc_checks, render_nhc_conf, render_nhc_deep_conf
from clusterctl.render.nccl_env import render_job_env, render_nccl_conf
from clusterctl.render.roles import SCHEDULER, SlurmPlan, plan_slurm
from clusterctl.render.scripts import MIG_SCRIPT, mig_instances
from clusterctl.render.slurm_conf import partition_sku
from clusterctl.render.storage import render_restore_script
from clusterctl.render.team import render_team_sync
from clusterctl.render.user_data import UserDataPlan, login_role, plan_user_data
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.defaults import login_count
from clusterctl.spec.model import ClusterSpec


def render_bundle(
    spec: ClusterSpec,
    stack: str,
    plan: SlurmPlan | None = None,
    user_data: UserDataPlan | None = None,
) -> dict[str, str]:
    """Every file of the cluster, by the scheduler's own bundle, plus each partition's nccl.conf;
    `plan`, `user_data`: a Slurm cluster's files and user-data as this run's program rendered
    them (roles.py, user_data.py)."""
    cat = catalog()
    files = (
        _slurm_bundle(spec, stack, cat, plan, user_data)
        if plan is not None
        else BUNDLES[spec.scheduler](spec, stack, cat)
    )
    for part in spec.partitions:
        files[f"nodes/{part.name}/nccl.conf"] = render_nccl_conf(partition_sku(part, cat), cat)
    return files


def _slurm_bundle(
    spec: ClusterSpec,
    stack: str,
    cat: Catalog,
    plan: SlurmPlan | None = None,
    user_data: UserDataPlan | None = None,
) -> dict[str, str]:
    plan = plan or plan_slurm(spec, stack, cat)
    user_data = user_data or plan_user_data(spec, stack, plan, cat)
    files: dict[str, str] = {}
    for rel, text in plan.slurm_files.items():
        files[f"slurm/{rel}"] = text
    files["cloud-init/scheduler.yaml"] = user_data.roles[SCHEDULER]
    files.update({f"scripts/{n}": text for n, text in plan.role(SCHEDULER).scripts.items()})
    files["scripts/slurm-config-sync.sh"] = plan.config_sync
    if disk_backup(spec.cloud, spec.scheduler) and spec.storage.backup.enabled:
        files["scripts/restore-shared.sh"] = render_restore_script(spec, stack)
    if login_count(spec):
        files["cloud-init/login.yaml"] = user_data.roles[login_role(0)]
    from clusterctl.render.monitoring import render_monitoring_bundle

    for rel, text in render_monitoring_bundle(spec, stack, cat).items():
        files[f"monitoring/{rel}"] = text
    if spec.head_node.accounting:
        files["scripts/gpucl-team-sync.sh"] = render_team_sync(spec, stack)
    for part in spec.partitions:
        sku = partition_sku(part, cat)
        files[f"cloud-init/{part.name}.yaml"] = user_data.roles[part.name]
        files[f"nodes/{part.name}/nhc.conf"] = render_nhc_conf(
            spec, sku, cat, mig_instances=mig_instances(part, sku, cat)
        )
        files[f"nodes/{part.name}/nhc-deep.conf"] = render_nhc_deep_conf(spec, sku, cat)
        files["nodes/gpucl.nhc"] = render_nhc_checks()
        files[f"nodes/{part.name}/job.env"] = render_job_env(sku, cat)
        for name, text in plan.role(part.name).scripts.items():
            # the MIG layout is the partition's own; the other scripts are the same on all
            files[f"nodes/{part.name}/{name}" if name == MIG_SCRIPT else f"scripts/{name}"] = text
    return files


def _kubernetes_bundle(spec: ClusterSpec, stack: str, cat: Catalog) -> dict[str, str]:
    from clusterctl.render.kubernetes import render_k8s_bundle
    from clusterctl.render.monitoring_k8s import render_k8s_monitoring_bundle

    files = {f"k8s/{rel}": text for rel, text in render_k8s_bundle(spec, stack).items()}
    for rel, text in render_k8s_monitoring_bundle(spec, stack).items():
        files[f"monitoring/{rel}"] = text
    return files


BUNDLES: dict[str, Callable[[ClusterSpec, str, Catalog], dict[str, str]]] = {
    "slurm": _slurm_bundle,
    "kubernetes": _kubernetes_bundle,
}
"""Per scheduler (platform.SCHEDULERS): the files its cluster gets."""
