"""Render everything that lands on a node or in a cluster: pure functions from spec to text.

Each function returns `{relative path: text}`; nothing here touches Pulumi, the disk (besides
reading templates) or the network.
"""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

import jinja2

from clusterctl.project import templates_dir
from clusterctl.render.apt_key import microsoft_apt_key
from clusterctl.render.deep import NHC_DEEP_CONF, deep_context, deep_hours
from clusterctl.render.power_files import (
    NAMES_SEED,
    POWER_CONFIG,
    POWER_HOME,
    POWER_LOG,
    POWER_NODE_MODULES,
    POWER_SCHEDULER_MODULES,
    names_seed,
    power_config,
    power_package,
    power_pins,
)
from clusterctl.render.site import SlurmSite
from clusterctl.render.storage import (
    FILES_MOUNT_OPTIONS,
    files_home_source,
    home_source_pattern,
    uses_files_share,
)
from clusterctl.spec.catalog import Catalog, Sku, catalog
from clusterctl.spec.model import ClusterSpec, PartitionSpec
from clusterctl.spec.power import power_plan
from clusterctl.spec.topology import FabricGroup, fabric_groups

"""RealMemory sits ~5% under the VM's memory so the OS and daemons keep room (cyclecloud-slurm)."""


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)


def partition_sku(part: PartitionSpec, cat: Catalog) -> Sku:
    return cat.require(part.sku, field="partitions[].sku")


def partition_groups(spec: ClusterSpec) -> dict[str, list[FabricGroup]]:
    return {
        p.name: fabric_groups(p.name, p.nodes, p.max_nodes_per_scale_set) for p in spec.partitions
    }


def slurm_context(spec: ClusterSpec, site: SlurmSite, stack: str, cat: Catalog) -> dict[str, Any]:
    default = spec.default_partition.name
    power = power_plan(spec)
    parts = []
    for part in spec.partitions:
        sku = partition_sku(part, cat)
        groups = fabric_groups(part.name, part.nodes, part.max_nodes_per_scale_set)
        lines = [{"names": g.hostlist, "group": g.name} for g in groups]
        parts.append(
            {
                "name": part.name,
                "default": part.name == default,
                "groups": groups,
                "node_lines": lines,
                "hostlist": ",".join(g.hostlist for g in groups),
                "cpus": sku.vcpus,
                "sockets": sku.shape.sockets,
                "cores_per_socket": sku.cores_per_socket,
                "gpu_files": sku.gpu_device_files,
                "blocks": nvlink_blocks(groups, sku.nodes_per_nvlink_domain),
                "real_memory_mib": sku.real_memory_mib,
                "gres_type": sku.gres_type,
                "gpus": sku.gpus,
                "suspend_time": power.of(part.name).suspend_time,
            }
        )
    return {
        "cluster": spec.name,
        "stack": stack,
        "site": site,
        "power": power,
        "partitions": parts,
        "accounting": spec.head_node.accounting,
        "health_checks": spec.health_checks.enabled,
        "task_prolog": TASK_PROLOG,
        "drain_prefix": spec.health_checks.drain_prefix,
        "topology": "block" if any(p["blocks"] for p in parts) else "tree",
        "gpu_counts": sorted({str(p["gpus"]) for p in parts}),
        "gpu_files": sorted({p["gpu_files"] for p in parts}),
    }


def nvlink_blocks(groups: list[FabricGroup], nodes_per_domain: int) -> list[dict[str, str]]:
    """Slurm topology/block blocks for a shape whose NVLink domain spans several VMs (NVL72: 18
    4-GPU VMs): consecutive names of one scale set, `nodes_per_domain` each; none for an HGX VM,
    whose NVLink domain is the VM itself."""
    if nodes_per_domain <= 1:
        return []
    blocks = []
    for g in groups:
        names = g.hostnames()
        for i in range(0, len(names), nodes_per_domain):
            first, last = i + 1, min(i + nodes_per_domain, len(names))
            nodes = f"{g.name}-[{first}-{last}]" if last > first else f"{g.name}-{first}"
            blocks.append({"name": f"{g.name}-nvl{i // nodes_per_domain}", "nodes": nodes})
    return blocks


def render_slurm(
    spec: ClusterSpec, site: SlurmSite, stack: str = "local", cat: Catalog | None = None
) -> dict[str, str]:
    """slurm.conf, gres.conf, cgroup.conf, topology.conf and the SPANK plugin stack."""
    ctx = slurm_context(spec, site, stack, cat or catalog())
    return {
        "slurm.conf": render_template("slurm/slurm.conf.j2", **ctx),
        "gres.conf": render_template("slurm/gres.conf.j2", **ctx),
        "cgroup.conf": render_template("slurm/cgroup.conf.j2", **ctx),
        "topology.conf": render_template("slurm/topology.conf.j2", **ctx),
        "plugstack.conf": render_template("slurm/plugstack.conf.j2", **ctx),
    }


SYNCED_SLURM_FILES = ("slurm.conf", "gres.conf", "topology.conf")
"""The Slurm files whose text depends on the partitions and their node counts."""


DRAIN_WAIT_SECONDS = 2700
"""How long a resize waits for jobs on the nodes it removes (inside the Run Command's hour)."""


def render_config_sync(
    spec: ClusterSpec,
    stack: str,
    cat: Catalog | None = None,
    *,
    drain_only: bool = False,
    drain_wait_seconds: int = DRAIN_WAIT_SECONDS,
) -> str:
    """The script the Pulumi program runs on the scheduler to bring a resize to the running
    cluster: drain the nodes that leave and wait until they are idle, then write the
    node-count-dependent files and run `scontrol reconfigure`. `drain_only`: the first part alone,
    run before any scale set shrinks."""
    site = cloud_site(spec)
    files = render_slurm(spec, site, stack, cat or catalog())
    blobs = {
        rel: "\n".join(_wrap(base64.b64encode(as_written(files[rel]).encode()).decode()))
        for rel in SYNCED_SLURM_FILES
    }
    keep = ",".join(g.hostlist for groups in partition_groups(spec).values() for g in groups)
    return render_template(
        "scripts/slurm-config-sync.sh.j2",
        cluster=spec.name,
        stack=stack,
        etc_dir=site.etc_dir,
        files={} if drain_only else blobs,
        keep=keep,
        drain_prefix=spec.health_checks.drain_prefix,
        drain_wait_seconds=drain_wait_seconds,
        drain_only=drain_only,
    )


def as_written(text: str) -> str:
    """A file's bytes as cloud-init writes them from a `content: |` block (YAML's clip: one
    final newline): the config sync must write the same bytes, or it finds every file changed
    and reconfigures (a restart of slurmctld since Slurm 23.11) on every `up`."""
    return text.rstrip("\n") + "\n" if text else text


def _wrap(text: str, width: int = 76) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)] or [""]


def _split_profile_env(sku: Sku, cat: Catalog) -> tuple[dict[str, str], dict[str, str]]:
    """(NCCL's own variables, the rest). NCCL reads /etc/nccl.conf once, at its first call, and
    setenv()s every line it has not been given (NVIDIA/nccl src/misc/param.cc setEnvFile; NCCL
    docs, Environment Variables): CUDA_DEVICE_ORDER, UCX_* and OMPI_MCA_* put there reach the
    process after CUDA and MPI_Init have read them, i.e. never. They go to the job environment."""
    profile = cat.profile(sku)
    env = dict(sorted(profile.env.items())) if profile else {}
    nccl = {k: v for k, v in env.items() if k.startswith("NCCL_")}
    return nccl, {k: v for k, v in env.items() if k not in nccl}


def render_nccl_conf(sku: Sku, cat: Catalog) -> str:
    profile = cat.profile(sku)
    return render_template(
        "nccl/nccl.conf.j2",
        sku=sku,
        env=_split_profile_env(sku, cat)[0],
        source=profile.source if profile else None,
    )


def render_job_env(sku: Sku, cat: Catalog) -> str:
    """The profile's variables for their own readers (CUDA, UCX, Open MPI, libfabric)."""
    return render_template("nccl/job.env.j2", sku=sku, env=_split_profile_env(sku, cat)[1])


SCRATCH = "/nvme"
"""The local NVMe scratch. Not under /mnt: on Azure sizes with a resource (temp) disk cloud-init
mounts it at /mnt (its default `ephemeral0` mount, cc_mounts.py, ordered after cloud-init's network
stage) later at boot than gpucl-scratch.service runs, and that mount would hide a scratch mounted
below it after every power cycle. /nvme, as Azure CycleCloud's Slurm nodes use."""
SHARED_MOUNTS = ("/home", "/sched")
"""The scheduler's NFS exports every GPU node mounts (fstab: _netdev,nofail)."""
MOUNT_RETRY = {"delay_s": 10, "total_s": 1200}
"""A GPU node's first boot waits this long for the scheduler's exports: the scheduler's own
cloud-init (packages, MariaDB, the power venv) can take longer than a node's."""
PYXIS_LIBRARY = "/usr/local/lib/slurm/spank_pyxis.so"
ENROOT_RUNTIME = f"{SCRATCH}/enroot/runtime"
# Fixed ids of the service users on every node (Azure/cyclecloud-slurm install.py setup_users).
SERVICE_IDS = {"slurm": 11100, "munge": 11101}
RESTART_POLICY = {"delay_s": 10, "burst": 5, "interval_s": 600}
"""The restart drop-in for munge, slurmctld, slurmdbd and slurmd (upstream units have no Restart=).
5 starts in 600 s outlasts a slurmctld that waits for its data disk or slurmdbd (10 s apart), and
still ends a crash loop within minutes."""
LOG_ROTATION = {"keep": 14, "max_size": "100M"}
"""Per log under site.log_dir (Slurm's and gpucl's): at most 15 x 100 MiB before compression."""
MARIADB_TUNING = {
    "innodb_buffer_pool_size": "4096M",
    "innodb_log_file_size": "64M",
    "innodb_lock_wait_timeout": "900",
}
"""Slurm's accounting guide (accounting.html): a buffer pool that holds the job tables' indexes,
a redo log sized for slurmdbd's bulk inserts, and a lock wait long enough for its purge and
rollup transactions (slurmdbd checks the buffer pool and the lock wait at start and logs
"Database settings not recommended values" when they are lower)."""
HEALTH_ENV = "/etc/gpu-clusters/health.env"
NCCL_CONF_OURS = "/etc/gpu-clusters/nccl.conf"
JOB_ENV = "/etc/gpu-clusters/job.env"
TASK_PROLOG = "gpucl-task-env.sh"
ACCOUNTING_DB = {"db_name": "slurm_acct_db", "db_user": "slurm", "account": "users"}
"""`account`: the Slurm account the admin user's association is made in, so the admin's jobs
(validation's included) are reported by `sreport` per account; sacct lists every job anyway."""
ACCOUNTING_DATADIR = "/shared/mysql"  # on the scheduler's data disk


def render_slurmdbd_conf(spec: ClusterSpec, site: SlurmSite, stack: str, db_password: str) -> str:
    return render_template(
        "slurm/slurmdbd.conf.j2",
        cluster=spec.name,
        stack=stack,
        site=site,
        db_password=db_password,
        **ACCOUNTING_DB,
    )


def scheduler_host(spec: ClusterSpec) -> str:
    return f"{spec.name}-scheduler"


def cloud_site(spec: ClusterSpec) -> SlurmSite:
    return SlurmSite(
        controller_host=scheduler_host(spec),
        health_check_program="/usr/local/libexec/gpu-clusters/gpucl-health.sh",
        health_check_interval_s=spec.health_checks.interval_seconds,
    )


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


def node_scripts(spec: ClusterSpec, site: SlurmSite, sku: Sku | None) -> dict[str, str]:
    """Scripts under site.libexec_dir; GPU nodes get their bring-up scripts too."""
    ctx = {
        "drain_prefix": spec.health_checks.drain_prefix,
        "scratch": SCRATCH,
        "shared_mounts": SHARED_MOUNTS,
        "libexec": site.libexec_dir,
        "gpus": sku.gpus if sku else 0,
        "fabric_manager": bool(sku and sku.shape.fabric_manager),
        "imex": bool(sku and sku.shape.imex),
        "cluster": spec.name,
        "conf_server": f"{scheduler_host(spec)}:{site.slurmctld_port}",
        "etc_dir": site.etc_dir,
        "nccl_conf_ours": NCCL_CONF_OURS,
        "job_env": JOB_ENV,
        "pyxis_tag": node_versions(catalog())["pyxis"],
        "pyxis_library": PYXIS_LIBRARY,
        "pyxis_conf": render_template(
            "slurm/pyxis.conf.j2", pyxis_library=PYXIS_LIBRARY, enroot_runtime=ENROOT_RUNTIME
        ).strip(),
    }
    names = ["prolog.sh", "epilog.sh", "gpucl-pyxis.sh", "gpucl-build-cache.sh"]
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
            TASK_PROLOG,
        ]
        ctx["mount_retry"] = MOUNT_RETRY
        ctx["nvme_expected"] = sku.local_nvme_disks or '""'
    if deep_hours(spec):
        names.append("gpucl-deep-check.sh" if sku is not None else "gpucl-deep-health.sh")
        ctx.update(deep_context(spec, site))
    if sku is None and spec.head_node.accounting:
        names.append("gpucl-accounting.sh")
        ctx.update(ACCOUNTING_DB, db_datadir=ACCOUNTING_DATADIR, admin_user=spec.ssh.admin_user)
    files = {name: render_template(f"scripts/{name}.j2", **ctx) for name in names}
    files["gpucl-health.sh"] = health_script(spec, site)
    return dict(sorted(files.items()))


NHC_FAST_CONF = "/etc/nhc/gpucl-fast.conf"
NHC_CHECKS = "/etc/nhc/scripts/gpucl.nhc"


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


def render_nhc_conf(spec: ClusterSpec, sku: Sku, cat: Catalog) -> str:
    """The fast tier: what the periodic health check runs on every node."""
    return render_template(
        "nhc/nhc.conf.j2", conf_path=NHC_FAST_CONF, **_nhc_context(spec, sku, cat)
    )


def render_nhc_deep_conf(spec: ClusterSpec, sku: Sku, cat: Catalog) -> str:
    """The deep tier: Azure's slow checks, for an idle node in an exclusive allocation only."""
    return render_template("nhc/deep.conf.j2", **_nhc_context(spec, sku, cat))


def render_nhc_checks() -> str:
    return render_template("nhc/gpucl.nhc.j2")


def node_versions(cat: Catalog) -> dict[str, str]:
    """What cloud-init installs, pinned in config/versions.yaml `nodePackages` (one place)."""
    pkgs = cat.versions.get("nodePackages", {})
    try:
        return {
            "slurm": str(pkgs["slurm"]["version"]),
            "slurm_repo": str(pkgs["slurm"]["aptRepo"]["jammy"]),
            "enroot": str(pkgs["enroot"]["version"]),
            "pyxis": str(pkgs["pyxis"]["gitTag"]),
            "aznhc": str(pkgs["nhc"]["azurehpcHealthChecks"]["version"]),
            "nhc_tag": str(pkgs["nhc"]["lbnl"]["gitTag"]),
            "nhc_commit": str(pkgs["nhc"]["lbnl"]["gitCommit"]),
            "nhc_repo": str(pkgs["nhc"]["lbnl"]["repo"]),
        }
    except (KeyError, TypeError) as exc:
        raise LookupError(f"config/versions.yaml nodePackages: missing {exc}") from None


def slurm_repo(cat: Catalog, sku: Sku) -> str:
    """The Slurm apt repository for the Ubuntu release of the SKU's image family."""
    codename = cat.gpu_image(sku).get("codename")
    repos = cat.versions.get("nodePackages", {}).get("slurm", {}).get("aptRepo", {})
    if codename not in repos:
        raise LookupError(f"config/versions.yaml nodePackages.slurm.aptRepo: no {codename!r} repo")
    return str(repos[codename])


def _files_home(spec: ClusterSpec, account: str | None) -> str | None:
    if not uses_files_share(spec):
        return None
    if not account:
        raise ValueError("storage.kind azure-files-nfs: the storage account name is needed")
    return files_home_source(account)


def render_cloud_init(
    spec: ClusterSpec,
    stack: str,
    *,
    munge_key_b64: str,
    partition: PartitionSpec | None = None,
    cat: Catalog | None = None,
    db_password: str | None = None,
    files_account: str | None = None,
    identity_client_id: str | None = None,
) -> str:
    """User-data for the scheduler (partition None) or a GPU node of `partition`;
    `files_account` is the storage account of /home's share (storage.kind azure-files-nfs);
    `identity_client_id` the scheduler's managed identity, for the power program."""
    from clusterctl.spec.addressing import subnet_plan

    cat = cat or catalog()
    site = cloud_site(spec)
    sku = partition_sku(partition, cat) if partition else None
    ctx: dict[str, Any] = {
        "cluster": spec.name,
        "stack": stack,
        "v": node_versions(cat),
        "ms_apt_key": microsoft_apt_key(cat),
        "munge_key": munge_key_b64,
        "slurm_files": render_slurm(spec, site, stack, cat),
        "scripts": node_scripts(spec, site, sku),
        "etc_dir": site.etc_dir,
        "libexec": site.libexec_dir,
        "state_dir": site.state_dir,
        "spool_dir": site.spool_dir,
        "log_dir": site.log_dir,
        "accounting": spec.head_node.accounting,
        "compute_subnet": subnet_plan(spec)["compute"],
        "scheduler_host": scheduler_host(spec),
        "drain_prefix": spec.health_checks.drain_prefix,
        "health_env": HEALTH_ENV,
        "scratch": SCRATCH,
        "ids": SERVICE_IDS,
        "restart": RESTART_POLICY,
        "log_rotation": LOG_ROTATION,
        "mariadb_tuning": MARIADB_TUNING,
        "nccl_conf_ours": NCCL_CONF_OURS,
        "power_home": POWER_HOME,
        "slurmctld_port": site.slurmctld_port,
        "deep_hours": deep_hours(spec),
        "files_home": _files_home(spec, files_account),
        "files_mount_options": FILES_MOUNT_OPTIONS,
    }
    if sku is None:
        ctx["power_files"] = power_package(POWER_SCHEDULER_MODULES)
        ctx["power_config_path"] = POWER_CONFIG
        ctx["power_config"] = (
            power_config(spec, identity_client_id) if identity_client_id else power_config(spec)
        )
        ctx["power_pins"] = power_pins(cat)
        ctx["names_seed_path"] = NAMES_SEED
        ctx["names_seed"] = names_seed(spec)
        if spec.head_node.accounting:
            if not db_password:
                raise ValueError("headNode.accounting needs the database password")
            ctx["slurmdbd_conf"] = render_slurmdbd_conf(spec, site, stack, db_password)
        return render_template("cloud-init/scheduler.yaml.j2", **ctx)
    ctx["v"] = {**ctx["v"], "slurm_repo": slurm_repo(cat, sku)}
    return render_template(
        "cloud-init/compute.yaml.j2",
        **ctx,
        partition=partition.name,
        sku=sku,
        power_files=power_package(POWER_NODE_MODULES),
        nccl_conf=render_nccl_conf(sku, cat),
        job_env_path=JOB_ENV,
        job_env=render_job_env(sku, cat),
        nhc_conf=render_nhc_conf(spec, sku, cat),
        nhc_deep_conf=render_nhc_deep_conf(spec, sku, cat),
        nhc_checks=render_nhc_checks(),
        nhc_paths={"fast": NHC_FAST_CONF, "deep": NHC_DEEP_CONF, "checks": NHC_CHECKS},
    )
