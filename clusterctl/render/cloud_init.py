"""The user-data of the scheduler and of a GPU node: every file, script and setting above, in one
cloud-init document per role. Pure: spec in, text out."""

from __future__ import annotations

import base64
import gzip
import posixpath
from typing import Any

from clusterctl.constants import SERVICE_IDS
from clusterctl.render.apt_key import microsoft_apt_key
from clusterctl.render.deep import NHC_DEEP_CONF, deep_hours
from clusterctl.render.downloads import enroot_debs
from clusterctl.render.health import render_nhc_checks, render_nhc_conf, render_nhc_deep_conf
from clusterctl.render.monitoring import node_monitoring, scheduler_monitoring
from clusterctl.render.nccl_env import render_job_env, render_nccl_conf
from clusterctl.render.paths import (
    ADOPT_ACCESS,
    ENROOT_CACHE,
    HEALTH_ENV,
    JOB_ENV,
    LOG_ROTATION,
    MARIADB_TUNING,
    NCCL_CONF_OURS,
    NHC_CHECKS,
    NHC_FAST_CONF,
    RESTART_POLICY,
    SCRATCH,
    WAITS_FOR_A_PEER,
)
from clusterctl.render.power_files import (
    NAMES_SEED,
    POWER_CONFIG,
    POWER_HOME,
    POWER_NODE_MODULES,
    POWER_SCHEDULER_MODULES,
    names_seed,
    power_config,
    power_package,
    power_pins,
)
from clusterctl.render.roles import LOGIN, SCHEDULER, SlurmPlan, plan_slurm
from clusterctl.render.scripts import mig_instances
from clusterctl.render.site import cloud_site, scheduler_host
from clusterctl.render.slurm_conf import partition_sku, render_slurmdbd_conf
from clusterctl.render.storage import (
    FILES_MOUNT_OPTIONS,
    NFSD_CONF,
    files_home_source,
    render_nfsd_conf,
    uses_files_share,
)
from clusterctl.render.team import team_context
from clusterctl.render.templates import render_template
from clusterctl.render.versions import node_versions, slurm_repo
from clusterctl.spec.catalog import Catalog, Sku, catalog
from clusterctl.spec.defaults import login_count, login_host
from clusterctl.spec.lustre import AMLFS_FS_NAME, AMLFS_MOUNT_OPTIONS
from clusterctl.spec.model import ClusterSpec, PartitionSpec

CUSTOM_DATA_LIMIT = 64 * 1024
"""Azure caps customData at 64 KiB before base64; the user-data goes there gzipped."""


def gzip_user_data(user_data: str) -> bytes:
    """The user-data as the VM gets it: gzipped (cloud-init unpacks gzip user-data from any
    datasource), byte-stable (no timestamp in the header)."""
    return gzip.compress(user_data.encode(), mtime=0)


def azure_custom_data(user_data: str) -> str:
    """Azure's osProfile.customData: the gzipped user-data, base64. Refused over Azure's cap
    here, with its size, rather than by Azure mid-deployment."""
    packed = gzip_user_data(user_data)
    if len(packed) >= CUSTOM_DATA_LIMIT:
        first = user_data.splitlines()[1:2] or ["user-data"]
        raise ValueError(
            f"{first[0].lstrip('# ')}: {len(packed)} bytes gzipped, over Azure's customData "
            f"cap of {CUSTOM_DATA_LIMIT}"
        )
    return base64.b64encode(packed).decode()


def _files_home(spec: ClusterSpec, account: str | None) -> str | None:
    if not uses_files_share(spec):
        return None
    if not account:
        raise ValueError("storage.kind azure-files-nfs: the storage account name is needed")
    return files_home_source(account)


def lustre_client(spec: ClusterSpec, cat: Catalog, mgs: str | None) -> dict[str, str] | None:
    """What a GPU or login node needs to mount storage.lustre: the fstab source (Microsoft's
    `MGS@tcp:/lustrefs`), the mount point and options, and the pinned client package."""
    fs = spec.storage.lustre
    if fs is None:
        return None
    if not mgs:
        raise ValueError("storage.lustre: the file system's MGS address is needed")
    return {
        "source": f"{mgs}@tcp:/{AMLFS_FS_NAME}",
        "mount": fs.mount_point,
        "options": AMLFS_MOUNT_OPTIONS,
        "client": node_versions(cat)["amlfs_lustre"],
    }


def render_cloud_init(
    spec: ClusterSpec,
    stack: str,
    *,
    munge_key_b64: str,
    partition: PartitionSpec | None = None,
    cat: Catalog | None = None,
    db_password: str | None = None,
    files_account: str | None = None,
    lustre_mgs: str | None = None,
    identity_client_id: str | None = None,
    login_index: int | None = None,
    plan: SlurmPlan | None = None,
) -> str:
    """User-data for the scheduler (partition None) or a GPU node of `partition`;
    `files_account` is the storage account of /home's share (storage.kind azure-files-nfs);
    `lustre_mgs` the MGS address of storage.lustre's file system (GPU and login nodes mount it);
    `identity_client_id` the scheduler's managed identity, for the power program;
    `login_index`: the user-data of that login node instead; `plan`: the cluster's files rendered
    once for this run (clusterctl/render/roles.py), rendered here when not given."""
    from clusterctl.spec.addressing import subnet_plan

    cat = cat or catalog()
    site = cloud_site(spec)
    sku = partition_sku(partition, cat) if partition else None
    plan = plan or plan_slurm(spec, stack, cat)
    role = plan.role(partition.name if partition else SCHEDULER)
    ctx: dict[str, Any] = {
        "cluster": spec.name,
        "stack": stack,
        "v": node_versions(cat),
        "ms_apt_key": microsoft_apt_key(cat),
        "munge_key": munge_key_b64,
        "slurm_files": plan.slurm_files,
        "scripts": role.scripts,
        "etc_dir": site.etc_dir,
        "libexec": site.libexec_dir,
        "state_dir": site.state_dir,
        "spool_dir": site.spool_dir,
        "log_dir": site.log_dir,
        "accounting": spec.head_node.accounting,
        "compute_subnet": subnet_plan(spec)["compute"],
        "scheduler_subnet": subnet_plan(spec)["scheduler"],
        "login_nodes": login_count(spec),
        "admin_user": spec.ssh.admin_user,
        "scheduler_host": scheduler_host(spec),
        "drain_prefix": spec.health_checks.drain_prefix,
        "health_env": HEALTH_ENV,
        "scratch": SCRATCH,
        "enroot_cache": ENROOT_CACHE,
        "ids": SERVICE_IDS,
        "restart": RESTART_POLICY,
        "waits_for_a_peer": WAITS_FOR_A_PEER,
        "log_rotation": LOG_ROTATION,
        "mariadb_tuning": MARIADB_TUNING,
        "nccl_conf_ours": NCCL_CONF_OURS,
        "power_home": POWER_HOME,
        "slurmctld_port": site.slurmctld_port,
        "deep_hours": deep_hours(spec),
        "files_home": _files_home(spec, files_account),
        "files_mount_options": FILES_MOUNT_OPTIONS,
        # the GPU and login nodes mount storage.lustre; the scheduler does not
        "lustre": lustre_client(spec, cat, lustre_mgs) if sku or login_index is not None else None,
        "team": team_context(spec) if spec.head_node.accounting else None,
    }
    if login_index is not None:
        ctx["scripts"] = plan.role(LOGIN).scripts
        return render_template(
            "cloud-init/login.yaml.j2", **ctx, login_host=login_host(spec, login_index)
        )
    if sku is None:
        ctx["power_files"] = power_package(POWER_SCHEDULER_MODULES)
        ctx["power_config_path"] = POWER_CONFIG
        ctx["power_config"] = (
            power_config(spec, cat, identity_client_id)
            if identity_client_id
            else power_config(spec, cat)
        )
        ctx["power_pins"] = power_pins(cat)
        ctx["names_seed_path"] = NAMES_SEED
        ctx["names_seed"] = names_seed(spec)
        ctx["nvlink_blocks"] = any(
            cat.require(p.sku).nodes_per_nvlink_domain > 1 for p in spec.partitions
        )
        ctx["mon"] = scheduler_monitoring(spec, stack, cat)
        ctx["nfsd_conf"] = {"path": NFSD_CONF, "content": render_nfsd_conf(spec)}
        if spec.head_node.accounting:
            if not db_password:
                raise ValueError("headNode.accounting needs the database password")
            ctx["slurmdbd_conf"] = render_slurmdbd_conf(spec, site, stack, db_password)
        return render_template("cloud-init/scheduler.yaml.j2", **ctx)
    assert partition is not None  # sku came from it
    ctx["v"] = {**ctx["v"], "slurm_repo": slurm_repo(cat, sku)}
    return render_template(
        "cloud-init/compute.yaml.j2",
        **ctx,
        partition=partition.name,
        sku=sku,
        power_files=power_package(POWER_NODE_MODULES),
        mon=node_monitoring(cat),
        nccl_conf=render_nccl_conf(sku, cat),
        job_env_path=JOB_ENV,
        job_env=render_job_env(sku, cat),
        nhc_conf=render_nhc_conf(spec, sku, cat, mig_instances=mig_instances(partition, sku, cat)),
        mig=bool(partition.sharing and partition.sharing.mig),
        nhc_deep_conf=render_nhc_deep_conf(spec, sku, cat),
        nhc_checks=render_nhc_checks(),
        nhc_paths={"fast": NHC_FAST_CONF, "deep": NHC_DEEP_CONF, "checks": NHC_CHECKS},
        adopt_access=ADOPT_ACCESS,
        topo_dir=_topology_dir(sku, cat),
        enroot_debs=enroot_debs(cat, sku),
        nvlink_blocks=sku.nodes_per_nvlink_domain > 1,
    )


def _topology_dir(sku: Sku, cat: Catalog) -> str | None:
    """The folder of the SKU's NCCL topology file (the image's /opt/microsoft), which container
    jobs need mounted: its /etc/nccl.conf names a file there."""
    profile = cat.profile(sku)
    return posixpath.dirname(profile.topo_file) if profile and profile.topo_file else None
