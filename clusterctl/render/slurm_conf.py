"""The Slurm files (slurm.conf, gres.conf, cgroup.conf, topology.conf, plugstack.conf,
slurmdbd.conf) and the config sync that brings a resize's files to the running scheduler."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from clusterctl.errors import Finding
from clusterctl.power.names import hostlist
from clusterctl.render.paths import ACCOUNTING_DB, TASK_PROLOG
from clusterctl.render.site import SlurmSite, cloud_site
from clusterctl.render.storage import NFSD_CONF, render_nfsd_conf, scheduler_nfsd_threads
from clusterctl.render.templates import render_template
from clusterctl.spec.catalog import Catalog, Sku, catalog
from clusterctl.spec.mig import COMPUTE_SLICES, cap_minor, mig_placements
from clusterctl.spec.model import ClusterSpec, PartitionSpec, field_path
from clusterctl.spec.power import power_plan
from clusterctl.spec.topology import ScaleSet, scale_sets_of


def partition_sku(part: PartitionSpec, cat: Catalog) -> Sku:
    return cat.require(part.sku, field="partitions[].sku")


def partition_scale_sets(spec: ClusterSpec) -> dict[str, list[ScaleSet]]:
    return {
        p.name: scale_sets_of(p.name, p.nodes, p.max_nodes_per_scale_set) for p in spec.partitions
    }


def slurm_context(spec: ClusterSpec, site: SlurmSite, stack: str, cat: Catalog) -> dict[str, Any]:
    default = spec.default_partition.name
    power = power_plan(spec)
    limits = job_node_limits(spec, cat)
    parts = []
    for part in spec.partitions:
        sku = partition_sku(part, cat)
        sets = scale_sets_of(part.name, part.nodes, part.max_nodes_per_scale_set)
        lines = [{"names": ss.hostlist, "scale_set": ss.name} for ss in sets]
        parts.append(
            {
                "name": part.name,
                "default": part.name == default,
                "scale_sets": sets,
                "node_lines": lines,
                "hostlist": ",".join(ss.hostlist for ss in sets),
                "max_job_nodes": limits[part.name],
                "cpus": sku.vcpus,
                "sockets": sku.shape.sockets,
                "cores_per_socket": sku.cores_per_socket,
                "gpu_files": sku.gpu_device_files,
                "blocks": nvlink_blocks(sets, sku.nodes_per_nvlink_domain),
                "real_memory_mib": sku.real_memory_mib,
                "gres_type": sku.gres_type,
                "gpus": sku.gpus,
                "suspend_time": power.of(part.name).suspend_time,
                **sharing_context(part, sku, cat),
            }
        )
    sizes = cluster_block_sizes(spec, cat)
    return {
        "cluster": spec.name,
        "stack": stack,
        "site": site,
        "power": power,
        "partitions": parts,
        "block_sizes": ",".join(str(n) for n in sizes),
        "accounting": spec.head_node.accounting,
        "health_checks": spec.health_checks.enabled,
        "task_prolog": TASK_PROLOG,
        "drain_prefix": spec.health_checks.drain_prefix,
        "topology": "block" if any(p["blocks"] for p in parts) else "tree",
        "gpu_counts": sorted({str(p["gpus"]) for p in parts}),
        "gpu_files": sorted({p["gpu_files"] for p in parts}),
        "gres_types": "gpu,shard" if any(p["shards"] for p in parts) else "gpu",
        "tres": accounting_tres(parts),
    }


def sharing_context(part: PartitionSpec, sku: Sku, cat: Catalog) -> dict[str, Any]:
    """A partition's GRES as its `sharing` makes them (Slurm's gres.html, "MIG Management" and
    "Sharding"): whole GPUs, MIG instances as typed GPUs, or whole GPUs plus shards."""
    sharing = part.sharing
    whole = f"gpu:{sku.gres_type}:{sku.gpus}"
    out: dict[str, Any] = {"mig": [], "shards": 0, "gres": whole, "billing": None}
    if sharing is None:
        return out
    # Fair share charges a shared GPU's part as the same part of what a whole-node job pays per
    # GPU (Slurm bills a job's CPUs unless TRESBillingWeights says otherwise: vcpus/gpus per GPU).
    per_gpu = sku.vcpus / sku.gpus
    if sharing.shards:
        out["shards"] = sharing.shards
        out["gres"] = f"{whole},shard:{sharing.shards * sku.gpus}"
        out["billing"] = f"CPU=0,GRES/shard={per_gpu / sharing.shards:.4g}"
        return out
    placements = mig_placements(part, sku, cat)
    counts: dict[str, int] = {}
    for p in placements:
        counts[p.profile.name] = counts.get(p.profile.name, 0) + sku.gpus
    out["gres"] = ",".join(f"gpu:{name}:{n}" for name, n in counts.items())
    # gres.conf(5) MultipleFiles, "for use with MIG": the GPU's device and its instance's two
    # capability devices, which cgroup.conf's ConstrainDevices then gives the job alone.
    out["mig"] = [
        {
            "type": p.profile.name,
            "files": ",".join(
                (
                    f"/dev/nvidia{g}",
                    f"/dev/nvidia-caps/nvidia-cap{cap_minor(g, p.gi_id)}",
                    f"/dev/nvidia-caps/nvidia-cap{cap_minor(g, p.gi_id, 0)}",
                )
            ),
        }
        for g in range(sku.gpus)
        for p in placements
    ]
    weights = {
        p.profile.name: per_gpu * p.profile.compute_slices / COMPUTE_SLICES for p in placements
    }
    out["billing"] = "CPU=0," + ",".join(f"GRES/gpu:{n}={w:.4g}" for n, w in weights.items())
    return out


def accounting_tres(parts: list[dict[str, Any]]) -> str:
    """AccountingStorageTRES: GPUs, and each MIG profile and shards where a partition has them,
    so `sreport`/`sshare` show slices by type and TRESBillingWeights can weigh them."""
    mig = sorted({m["type"] for p in parts for m in p["mig"]})
    extra = [f"gres/gpu:{t}" for t in mig] + (
        ["gres/shard"] if any(p["shards"] for p in parts) else []
    )
    return ",".join(["gres/gpu", *extra])


def largest_job_nodes(sets: list[ScaleSet]) -> int:
    """The most nodes one job can get: one scale set's, one InfiniBand fabric (no switch joins
    two sets in topology.conf; Azure's InfiniBand does not span placement groups)."""
    return max(ss.size for ss in sets)


def cluster_block_sizes(spec: ClusterSpec, cat: Catalog) -> list[int]:
    """BlockSizes of the cluster's topology.conf (every block partition's sets, in order)."""
    sets, domain = [], 1
    for part in spec.partitions:
        nodes = partition_sku(part, cat).nodes_per_nvlink_domain
        if nodes > 1:
            domain = max(domain, nodes)
            sets += scale_sets_of(part.name, part.nodes, part.max_nodes_per_scale_set)
    return block_sizes(sets, domain)


def job_node_limits(spec: ClusterSpec, cat: Catalog) -> dict[str, int]:
    """Partition -> the most nodes one job may ask for (slurm.conf MaxNodes, what `plan` says):
    one scale set's, and with topology/block no more than the largest block level, which Slurm
    cannot exceed in one placement."""
    sizes = cluster_block_sizes(spec, cat)
    out = {}
    for part in spec.partitions:
        most = largest_job_nodes(scale_sets_of(part.name, part.nodes, part.max_nodes_per_scale_set))
        if sizes and partition_sku(part, cat).nodes_per_nvlink_domain > 1:
            most = min(most, sizes[-1])
        out[part.name] = most
    return out


def block_size_findings(spec: ClusterSpec, cat: Catalog) -> list[Finding]:
    """A warning per block partition whose scale sets cannot all use their whole size in one
    job: BlockSizes (block_sizes) keeps a level only while 2^k divides every set's block count,
    so a set of 5 racks (or one beside a set of 2) loses the levels above, and MaxNodes with
    them."""
    sizes = cluster_block_sizes(spec, cat)
    out = []
    for i, part in enumerate(spec.partitions):
        domain = partition_sku(part, cat).nodes_per_nvlink_domain
        if domain <= 1 or not sizes:
            continue
        sets = scale_sets_of(part.name, part.nodes, part.max_nodes_per_scale_set)
        counts = [-(-ss.size // domain) for ss in sets]
        top = sizes[-1] // domain
        if top >= min(max(counts), 16):  # Slurm's levels 0-4 at most: 16 blocks
            continue
        best = domain * (1 << (max(counts).bit_length() - 1))
        out.append(
            Finding(
                "warning",
                f"partition {part.name}: its scale sets hold {', '.join(map(str, counts))} "
                f"NVLink blocks of {domain} nodes, not all a power of two alike; aggregated blocks "
                f"stay inside one set only with BlockSizes={','.join(map(str, sizes))}, "
                f"so the largest job is {sizes[-1]} nodes, not {max(ss.size for ss in sets)}: "
                f"set maxNodesPerScaleSet to {best} and nodes to a multiple of it",
                field_path("partitions", i, "maxNodesPerScaleSet"),
            )
        )
    return out


def block_sizes(sets: list[ScaleSet], nodes_per_domain: int) -> list[int]:
    """topology/block's BlockSizes that keep every aggregated block inside one scale set (one
    InfiniBand fabric). Slurm aggregates base blocks by their order in topology.conf, 2^k
    consecutive blocks at level k, starting at a multiple of 2^k; without BlockSizes it uses
    levels 0-4 (up to 16 blocks), so the last rack of one set was paired with the first of the
    next (SchedMD slurm src/plugins/topology/block/block_record.c; topology.conf(5): the first
    size is the base block's node count, each next one a power of two times larger). A level is
    kept while 2^k divides every set's block count, so every set starts on a boundary of every
    level. Empty padding blocks would allow more levels, but Slurm 24.11 refuses a block without
    nodes ('lacks children'). Empty for a shape without multi-VM NVLink domains."""
    if nodes_per_domain <= 1 or not sets:
        return []
    counts = [-(-ss.size // nodes_per_domain) for ss in sets]
    level = 1
    while all(c % (level * 2) == 0 for c in counts):
        level *= 2
    return [nodes_per_domain * (1 << k) for k in range(level.bit_length())]


def nvlink_blocks(sets: list[ScaleSet], nodes_per_domain: int) -> list[dict[str, str]]:
    """Slurm topology/block blocks for a shape whose NVLink domain spans several VMs (NVL72: 18
    4-GPU VMs): consecutive names of one scale set, `nodes_per_domain` each; none for an HGX VM,
    whose NVLink domain is the VM itself."""
    if nodes_per_domain <= 1:
        return []
    blocks = []
    for ss in sets:
        names = ss.hostnames()
        for i in range(0, len(names), nodes_per_domain):
            first, last = i + 1, min(i + nodes_per_domain, len(names))
            nodes = hostlist(ss.name, first, last)
            blocks.append({"name": f"{ss.name}-nvl{i // nodes_per_domain}", "nodes": nodes})
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
    slurm_files: Mapping[str, str] | None = None,
) -> str:
    """The script the Pulumi program runs on the scheduler to bring a resize to the running
    cluster: drain the nodes that leave and wait until they are idle, then write the
    node-count-dependent files and run `scontrol reconfigure`. `drain_only`: the first part alone,
    run before any scale set shrinks. `slurm_files`: render_slurm's, when the caller has them
    (clusterctl/render/roles.py), so the cluster's Slurm files are rendered once."""
    site = cloud_site(spec)
    blobs: dict[str, str] = {}
    if not drain_only:
        files = slurm_files or render_slurm(spec, site, stack, cat or catalog())
        blobs = {rel: _b64(as_written(files[rel])) for rel in SYNCED_SLURM_FILES}
    keep = ",".join(ss.hostlist for sets in partition_scale_sets(spec).values() for ss in sets)
    return render_template(
        "scripts/slurm-config-sync.sh.j2",
        cluster=spec.name,
        stack=stack,
        etc_dir=site.etc_dir,
        files=blobs,
        keep=keep,
        drain_prefix=spec.health_checks.drain_prefix,
        drain_wait_seconds=drain_wait_seconds,
        drain_only=drain_only,
        nfsd_conf_path=NFSD_CONF,
        nfsd_conf=_b64(render_nfsd_conf(spec)),
        nfsd_threads=scheduler_nfsd_threads(spec),
    )


def as_written(text: str) -> str:
    """A file's bytes as cloud-init writes them from a `content: |` block (YAML's clip: one
    final newline): the config sync must write the same bytes, or it finds every file changed
    and reconfigures (a restart of slurmctld since Slurm 23.11) on every `up`."""
    return text.rstrip("\n") + "\n" if text else text


def _b64(text: str) -> str:
    return "\n".join(_wrap(base64.b64encode(text.encode()).decode()))


def _wrap(text: str, width: int = 76) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)] or [""]


def render_slurmdbd_conf(spec: ClusterSpec, site: SlurmSite, stack: str, db_password: str) -> str:
    return render_template(
        "slurm/slurmdbd.conf.j2",
        cluster=spec.name,
        stack=stack,
        site=site,
        db_password=db_password,
        **ACCOUNTING_DB,
    )
