"""Render everything that lands on a node or in a cluster: pure functions from spec to text.

Each function returns `{relative path: text}`; nothing here touches Pulumi, the disk (besides
reading templates) or the network.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

from clusterctl.catalog import Catalog, Sku, catalog
from clusterctl.paths import templates_dir
from clusterctl.site import SlurmSite
from clusterctl.spec import ClusterSpec, PartitionSpec
from clusterctl.topology import FabricGroup, fabric_groups

MEMORY_HEADROOM = 0.95
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
    sku = cat.get(part.sku)
    if sku is None:  # the spec rules refuse unknown SKUs before anything renders
        raise LookupError(part.sku)
    return sku


def partition_groups(spec: ClusterSpec) -> dict[str, list[FabricGroup]]:
    return {p.name: fabric_groups(p.name, p.nodes) for p in spec.partitions}


def slurm_context(spec: ClusterSpec, site: SlurmSite, stack: str, cat: Catalog) -> dict[str, Any]:
    default = spec.default_partition.name
    parts = []
    for part in spec.partitions:
        sku = partition_sku(part, cat)
        groups = fabric_groups(part.name, part.nodes)
        if site.node_addrs:
            lines = [
                {"names": host, "addr": site.node_addrs.get(host), "group": g.name}
                for g in groups
                for host in g.hostnames()
            ]
        else:
            lines = [{"names": g.hostlist, "addr": None, "group": g.name} for g in groups]
        parts.append(
            {
                "name": part.name,
                "default": part.name == default,
                "groups": groups,
                "node_lines": lines,
                "hostlist": ",".join(g.hostlist for g in groups),
                "cpus": sku.vcpus,
                "sockets": 2,
                "cores_per_socket": sku.vcpus // 2,
                "real_memory_mib": int(sku.memory_mib * MEMORY_HEADROOM),
                "gres_type": sku.gres_type,
                "gpus": sku.gpus,
            }
        )
    leaves = [g.name for p in parts for g in p["groups"]]
    return {
        "cluster": spec.name,
        "stack": stack,
        "site": site,
        "partitions": parts,
        "accounting": spec.head_node.accounting,
        "health_checks": spec.health_checks.enabled,
        "drain_prefix": spec.health_checks.drain_prefix,
        "topology": True,
        "leaves": ",".join(leaves),
        "gpu_counts": sorted({str(p["gpus"]) for p in parts}),
        "pyxis_library": "/usr/local/lib/slurm/spank_pyxis.so",
        "enroot_runtime": "/mnt/nvme/enroot/runtime",
    }


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
        "plugstack.conf.d/pyxis.conf": render_template("slurm/pyxis.conf.j2", **ctx),
    }


def render_nccl_conf(sku: Sku, cat: Catalog) -> str:
    profile = cat.profile(sku)
    return render_template(
        "nccl/nccl.conf.j2",
        sku=sku,
        env=dict(sorted(profile.env.items())) if profile else {},
        source=profile.source if profile else None,
    )
