"""The scripts under the site's libexec dir: prolog and epilog, power hooks on the scheduler, a GPU
node's bring-up (scratch, mounts, name, NCCL conf), the deep tier and accounting."""

from __future__ import annotations

from clusterctl.render.deep import deep_context, deep_hours
from clusterctl.render.downloads import pyxis_commit
from clusterctl.render.health import health_script
from clusterctl.render.paths import (
    ACCOUNTING_DATADIR,
    ACCOUNTING_DB,
    ADOPT_ACCESS,
    BUILD_LOCK_S,
    ENROOT_CACHE,
    ENROOT_CACHE_GIB,
    ENROOT_RUNTIME,
    IMEX_DIR,
    IMEX_SERVER_PORT,
    JOB_ENV,
    MOUNT_RETRY,
    NCCL_CONF_OURS,
    PYXIS_LIBRARY,
    SCRATCH,
    SHARED_MOUNTS,
    TASK_PROLOG,
    host_keys,
    hosts_map,
)
from clusterctl.render.power_files import POWER_LOG
from clusterctl.render.site import SlurmSite, scheduler_host
from clusterctl.render.team import team_context
from clusterctl.render.templates import render_template
from clusterctl.render.versions import node_versions
from clusterctl.spec.catalog import Catalog, Sku, catalog
from clusterctl.spec.mig import describe, mig_placements
from clusterctl.spec.model import ClusterSpec, PartitionSpec

MIG_SCRIPT = "gpucl-mig.sh"
"""A MIG partition's boot step (templates/scripts/gpucl-mig.sh.j2)."""


def node_scripts(
    spec: ClusterSpec, site: SlurmSite, sku: Sku | None, partition: PartitionSpec | None = None
) -> dict[str, str]:
    """Scripts under site.libexec_dir; GPU nodes get their bring-up scripts too (and the MIG
    layout's boot step on a partition with `sharing.mig`)."""
    ctx: dict[str, object] = {
        "drain_prefix": spec.health_checks.drain_prefix,
        "scratch": SCRATCH,
        "shared_mounts": shared_mounts(spec),
        "lustre_mount": lustre_mount(spec),
        "libexec": site.libexec_dir,
        "gpus": sku.gpus if sku else 0,
        "fabric_manager": bool(sku and sku.shape.fabric_manager),
        "imex": bool(sku and sku.shape.imex),
        "imex_dir": IMEX_DIR,
        "imex_port": IMEX_SERVER_PORT,
        "cluster": spec.name,
        "hosts_map": hosts_map(spec.name),
        "host_keys": host_keys(spec.name),
        "scheduler_host": scheduler_host(spec),
        "conf_server": f"{scheduler_host(spec)}:{site.slurmctld_port}",
        "etc_dir": site.etc_dir,
        "nccl_conf_ours": NCCL_CONF_OURS,
        "job_env": JOB_ENV,
        "pyxis_tag": node_versions(catalog())["pyxis"],
        "pyxis_commit": pyxis_commit(catalog()),
        "pyxis_library": PYXIS_LIBRARY,
        "build_lock_s": BUILD_LOCK_S,
        "pyxis_conf": render_template(
            "slurm/pyxis.conf.j2", pyxis_library=PYXIS_LIBRARY, enroot_runtime=ENROOT_RUNTIME
        ).strip(),
    }
    names = [
        "prolog.sh",
        "epilog.sh",
        "gpucl-pyxis.sh",
        "gpucl-build-cache.sh",
        "gpucl-hosts.sh",
        "gpucl-known-hosts.sh",
    ]
    if sku is None:
        names += ["resume.sh", "suspend.sh", "resume-fail.sh"]
        ctx["power_log"] = POWER_LOG
    if sku is not None:
        names += [
            "gpucl-scratch.sh",
            "node-name.sh",
            "gpu-node-setup.sh",
            "gpucl-nccl-conf.sh",
            "gpucl-mounts.sh",
            "gpucl-pam-adopt.sh",
            "gpucl-fetch.sh",
            TASK_PROLOG,
        ]
        ctx["adopt_access"] = ADOPT_ACCESS
        ctx["mount_retry"] = MOUNT_RETRY
        ctx["team_users"] = spec.head_node.accounting
        ctx["nvme_expected"] = sku.local_nvme_disks or '""'
        ctx["enroot_cache"] = ENROOT_CACHE
        ctx["enroot_cache_gib"] = ENROOT_CACHE_GIB
    if deep_hours(spec):
        names.append("gpucl-deep-check.sh" if sku is not None else "gpucl-deep-health.sh")
        ctx.update(deep_context(spec, site))
    if sku is None and spec.head_node.accounting:
        names.append("gpucl-accounting.sh")
        ctx.update(ACCOUNTING_DB, db_datadir=ACCOUNTING_DATADIR, admin_user=spec.ssh.admin_user)
    if spec.head_node.accounting:  # the team: users and accounts are Slurm associations
        names.append("gpucl-users.sh")
        ctx.update(team_context(spec))
    if sku is not None and partition is not None and partition.sharing and partition.sharing.mig:
        names.append(MIG_SCRIPT)
        ctx.update(mig_context(partition, sku, catalog()))
    files = {name: render_template(f"scripts/{name}.j2", **ctx) for name in names}
    files["gpucl-health.sh"] = health_script(spec, site)
    return dict(sorted(files.items()))


def lustre_mount(spec: ClusterSpec) -> str | None:
    """Where storage.lustre's file system is mounted on the GPU and login nodes, if any."""
    return spec.storage.lustre.mount_point if spec.storage.lustre else None


def shared_mounts(spec: ClusterSpec) -> tuple[str, ...]:
    """What gpucl-mounts.sh mounts (and slurmd waits for): the scheduler's exports, and the
    Managed Lustre file system where the stack has one."""
    lustre = lustre_mount(spec)
    return (*SHARED_MOUNTS, lustre) if lustre else SHARED_MOUNTS


def mounts_script(spec: ClusterSpec) -> dict[str, str]:
    """gpucl-mounts.sh alone: the login node's (a GPU node gets it with its other scripts)."""
    text = render_template(
        "scripts/gpucl-mounts.sh.j2",
        shared_mounts=shared_mounts(spec),
        lustre_mount=lustre_mount(spec),
        mount_retry=MOUNT_RETRY,
    )
    return {"gpucl-mounts.sh": text}


def mig_context(partition: PartitionSpec, sku: Sku, cat: Catalog) -> dict[str, object]:
    """What gpucl-mig.sh creates on each GPU, and the `-lgi` rows it expects back."""
    assert partition.sharing is not None
    placements = mig_placements(partition, sku, cat)
    return {
        "mig_layout": describe(partition.sharing.mig),
        "mig_create": ",".join(p.spec for p in placements),
        "mig_expect": [
            f"{p.profile.name} {p.gi_id} {p.start}:{p.profile.memory_slices}" for p in placements
        ],
    }


def mig_instances(partition: PartitionSpec, sku: Sku, cat: Catalog) -> int:
    """MIG instances per GPU of the partition; 0 without `sharing.mig`."""
    if not (partition.sharing and partition.sharing.mig):
        return 0
    return len(mig_placements(partition, sku, cat))
