"""The power program as cloud-init installs it: clusterctl/power's modules (as text, gzipped),
its config file and the pinned SDKs of its venv (config/versions.yaml `powerProgram`)."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

from clusterctl.power.names import slurm_name
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.power import power_plan
from clusterctl.spec.topology import scale_sets_of

POWER_CONFIG = "/etc/gpu-clusters/power.json"
POWER_LOG = "/var/log/slurm/gpucl-power.log"
POWER_HOME = "/opt/gpucl"
NAMES_SEED = "/etc/gpu-clusters/names.seed.json"
"""The power program on the scheduler: a venv with pinned azure SDKs (config/versions.yaml
`powerProgram`) and the package clusterctl/power copied to <home>/lib/gpucl_power."""


POWER_SCHEDULER_MODULES = (
    "__init__.py",
    "__main__.py",
    "names.py",
    "backend.py",
    "slurm.py",
    "program.py",
    "azure_backend.py",
)
POWER_NODE_MODULES = ("__init__.py", "names.py", "slurm.py", "events.py")


def power_package(modules: tuple[str, ...]) -> dict[str, str]:
    """Source of clusterctl/power's modules, as cloud-init writes them to <home>/lib/gpucl_power
    (read as text: the renderer never imports the power program)."""
    return package_files("power", modules)


def package_files(package: str, modules: tuple[str, ...]) -> dict[str, str]:
    """clusterctl/<package>'s modules as cloud-init writes them (`encoding: gz+b64`), by name."""
    root = Path(__file__).resolve().parents[1] / package
    return {name: gzip_b64((root / name).read_text()) for name in modules}


def gzip_b64(text: str) -> str:
    """cloud-init `encoding: gz+b64`, byte-stable (no timestamp in the gzip header)."""
    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


CLIENT_ID_PLACEHOLDER = "the-scheduler-identity-client-id-known-at-deploy-time"


def power_config(spec: ClusterSpec, client_id: str = CLIENT_ID_PLACEHOLDER) -> str:
    """/etc/gpu-clusters/power.json: what the power program knows of its cluster. Subscription
    and resource group come from the scheduler's own IMDS (the scale sets live beside it); the
    credential is the scheduler's user-assigned identity, named by `client_id`."""
    plan = power_plan(spec)
    doc = {
        "cluster": spec.name,
        "backend": "azure",
        "reasonPrefix": spec.health_checks.drain_prefix,
        "resumeWaitSeconds": 900,
        # One deadline per run for every call and retry, a minute below the timeout at which
        # slurmctld gives up on the program (slurm.conf ResumeTimeout, SuspendTimeout).
        "resumeDeadlineSeconds": plan.resume_timeout_s - 60,
        "suspendDeadlineSeconds": plan.suspend_timeout_s - 60,
        "pollSeconds": 15,
        "returnAfterSeconds": 900,
        "logFile": POWER_LOG,
        "azure": {"clientId": client_id},
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def names_seed(spec: ClusterSpec) -> str:
    """The name map a new cluster starts from: in every scale set, instance ids 0..N-1 named
    1..N, as Azure numbers a new uniform scale set. The scheduler's first boot puts it at
    /sched/<cluster>/names.json when there is none, before it exports /sched, so booting nodes
    find their names without waiting for `gpucl-power names` (which needs the power venv, built
    later). Where Azure numbered otherwise (a VM re-created after a failed provisioning), that VM
    finds no name and asks; the reconciler frees the names of ids that do not exist and names it."""
    names = {
        g.vm_set_name(spec.name): {str(i): slurm_name(g.name, i + 1) for i in range(g.size)}
        for p in spec.partitions
        for g in scale_sets_of(p.name, p.nodes, p.max_nodes_per_scale_set)
    }
    return json.dumps({"names": names}, indent=2, sort_keys=True) + "\n"


def power_pins(cat: Catalog) -> list[str]:
    pins = (cat.versions.get("powerProgram") or {}).get("pypi") or {}
    if not pins:
        raise LookupError("config/versions.yaml powerProgram.pypi: missing")
    return [f"{name}=={version}" for name, version in sorted(pins.items())]
