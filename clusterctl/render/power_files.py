"""The power program as cloud-init installs it: clusterctl/power's modules (as text, gzipped),
its config file and the pinned SDKs of its venv (config/versions.yaml `powerProgram`)."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

from clusterctl.power.down_billing import RECORD_FILE
from clusterctl.power.names import SCHED, slurm_name
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
    "down_billing.py",
    "fabric.py",
)
POWER_NODE_MODULES = ("__init__.py", "names.py", "slurm.py", "events.py", "fabric.py")


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


TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"
"""node_exporter's textfile directory as Debian and Ubuntu package it."""
DOWN_BILLING_TEXTFILE = "gpucl-down-billing.prom"


def down_billing_textfile(spec: ClusterSpec) -> str:
    """Where `gpucl-power return` (as slurm) writes its Prometheus form: beside the record in
    /sched/<cluster>, which slurm owns; the unit's root step copies it into TEXTFILE_DIR."""
    return str(SCHED / spec.name / DOWN_BILLING_TEXTFILE)


def down_billing_record(spec: ClusterSpec) -> str:
    return str(SCHED / spec.name / RECORD_FILE)


def power_config(spec: ClusterSpec, cat: Catalog, client_id: str = CLIENT_ID_PLACEHOLDER) -> str:
    """/etc/gpu-clusters/power.json: what the power program knows of its cluster. Subscription
    and resource group come from the scheduler's own IMDS (the scale sets live beside it); the
    credential is the scheduler's user-assigned identity, named by `client_id`. Each scale set's
    on-demand price prices the DOWN nodes whose VM still bills (a set whose size has no catalog
    price is left out: unknown, never 0)."""
    plan = power_plan(spec)
    prices = {
        g.vm_set_name(spec.name): price
        for p in spec.partitions
        if (price := cat.require(p.sku, field="partitions[].sku").price.usd_per_hour) is not None
        for g in scale_sets_of(p.name, p.nodes, p.max_nodes_per_scale_set)
    }
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
        "downBillingRecord": True,
        "textfile": down_billing_textfile(spec),
        "pricesUsdPerHour": prices,
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
