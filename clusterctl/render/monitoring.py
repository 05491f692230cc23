"""Monitoring of a Slurm cluster as its nodes get it: Prometheus and its alert rules and the Slurm
exporter (clusterctl/monitor, copied as gpucl_monitor) on the scheduler, node_exporter everywhere,
NVIDIA's DCGM exporter on the GPU nodes with the fields the dashboards read; the Grafana
dashboards as JSON for `plan --out`. Pure: spec in, text out."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from clusterctl.project import templates_dir
from clusterctl.render.downloads import dcgm_reference
from clusterctl.render.power_files import (
    DOWN_BILLING_TEXTFILE,
    TEXTFILE_DIR,
    down_billing_textfile,
    package_files,
)
from clusterctl.render.site import scheduler_host
from clusterctl.render.slurm_conf import partition_sku
from clusterctl.render.storage import scheduler_disk_gib
from clusterctl.render.templates import render_template
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.model import ClusterSpec

MONITOR_CONFIG = "/etc/gpu-clusters/monitoring.json"
PROM_DIR = "/etc/gpu-clusters/prometheus"
PROM_CONFIG = f"{PROM_DIR}/prometheus.yml"
PROM_RULES = f"{PROM_DIR}/gpucl.rules.yml"
TARGETS_DIR = f"{PROM_DIR}/targets"
TEXTFILE = f"{TEXTFILE_DIR}/gpucl-slurm.prom"
"""node_exporter's textfile directory as Debian and Ubuntu package it (the collector's default
there), so the package's own unit needs no change."""
PROM_DATA = "/shared/prometheus"
"""On the scheduler's data disk: a re-created scheduler keeps its metrics, and 30 days of a large
cluster do not fill the OS disk (capped at a tenth of the data disk, see prometheus_args)."""
DCGM_COUNTERS = "/etc/gpu-clusters/dcgm-exporter/counters.csv"
DCGM_COUNTERS_IN_CONTAINER = "/etc/dcgm-exporter/gpucl-counters.csv"
PORTS = {"prometheus": 9090, "node": 9100, "dcgm": 9400}
INTERVAL_S = 30
RETENTION_DAYS = 30
GPU_TEMP_ALERT_C = 85
MONITOR_MODULES = ("__init__.py", "__main__.py", "slurm_metrics.py")


def _mon_dir() -> Path:
    return templates_dir() / "monitoring"


def _ctx(spec: ClusterSpec, stack: str) -> dict[str, Any]:
    ctx = _base_ctx(spec, stack)
    rules = render_template("monitoring/gpucl.rules.yml.j2", **ctx)
    return {**ctx, "kept_metrics": kept_metrics_regex(rules, dashboards().values())}


def _base_ctx(spec: ClusterSpec, stack: str) -> dict[str, Any]:
    return {
        "cluster": spec.name,
        "stack": stack,
        "scheduler_host": scheduler_host(spec),
        "interval_s": INTERVAL_S,
        "ports": PORTS,
        "targets_dir": TARGETS_DIR,
        "rules_path": PROM_RULES,
        "gpu_temp_c": GPU_TEMP_ALERT_C,
        "slurm": True,
    }


def render_prometheus_config(spec: ClusterSpec, stack: str) -> str:
    return render_template("monitoring/prometheus.yml.j2", **_ctx(spec, stack))


def render_alert_rules(spec: ClusterSpec, stack: str) -> str:
    return render_template("monitoring/gpucl.rules.yml.j2", **_base_ctx(spec, stack))


# PromQL words that are not metric names: operators, modifiers, literals. Functions and
# aggregations are known by the `(` after them; label names by where they stand.
_NOT_METRICS = {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2", "start", "end"}
_LABEL_LISTS = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_NAME = re.compile(r"(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (Prometheus docs, querying/basics: a name is
    [a-zA-Z_:][a-zA-Z0-9_:]*, label matchers stand in {}, ranges and durations in [])."""
    text = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', " ", expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", text)
    text = re.sub(r"\boffset\s+\S+", " ", text)
    text = _LABEL_LISTS.sub(" ", text)
    return {n for n, call in _NAME.findall(text) if not call and n.lower() not in _NOT_METRICS}


def _exprs(node: Any) -> Iterator[str]:
    """Every `expr` string in a rules file or a Grafana dashboard, however deep."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield value
            else:
                yield from _exprs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _exprs(item)


def used_metrics(rules: str, dashboard_texts: Iterable[str]) -> set[str]:
    """The metric names the shipped alert rules and dashboard panels read."""
    docs = [yaml.safe_load(rules), *(json.loads(t) for t in dashboard_texts)]
    return {name for doc in docs for expr in _exprs(doc) for name in metric_names(expr)}


def kept_metrics_regex(rules: str, dashboard_texts: Iterable[str]) -> str:
    """The `keep` regex of the node and DCGM scrapes: every name a rule or a panel reads, and no
    other (node_exporter alone sends ~1,900 series per 96-core GPU VM: ~1.9 M at 1,000 nodes).
    Prometheus anchors it (^...$); `up` and the scrape_* series are not relabelled."""
    return "|".join(sorted(used_metrics(rules, dashboard_texts)))


def prometheus_args(spec: ClusterSpec) -> str:
    """The scheduler's Prometheus command line (a drop-in replaces the package's ExecStart):
    our config, 30 days kept but never more than a tenth of the data disk, the UI and API on
    localhost only (reach it through ssh -L)."""
    cap_gb = retention_cap_gb(spec)
    return " ".join(
        [
            "/usr/bin/prometheus",
            f"--config.file={PROM_CONFIG}",
            f"--storage.tsdb.path={PROM_DATA}",
            f"--storage.tsdb.retention.time={RETENTION_DAYS}d",
            f"--storage.tsdb.retention.size={cap_gb}GB",
            f"--web.listen-address=127.0.0.1:{PORTS['prometheus']}",
        ]
    )


BYTES_PER_SAMPLE = 2
"""Prometheus's storage docs (docs/storage.md, "Operational aspects"): "an average of only 1-2
bytes per sample"; the upper end, so the estimate errs towards fewer days."""
SCRAPE_SERIES_PER_TARGET = 5
"""up, scrape_duration_seconds, scrape_samples_scraped, scrape_samples_post_metric_relabeling,
scrape_series_added: written for every target, never relabelled (Prometheus docs,
configuration: "Automatically generated labels and time series")."""


@dataclass(frozen=True)
class Retention:
    series: int
    gb_per_day: float
    cap_gb: int
    days: float

    @property
    def short(self) -> bool:
        return self.days < RETENTION_DAYS


def retention_cap_gb(spec: ClusterSpec) -> int:
    """storage.tsdb.retention.size: a tenth of the scheduler's data disk."""
    return max(1, scheduler_disk_gib(spec) // 10)


def retention(spec: ClusterSpec, stack: str, cat: Catalog) -> Retention:
    """How many days of metrics the cap holds with every GPU node up: the kept series (each
    GPU's DCGM fields a rule or panel reads, each fabric NIC's kept node_exporter series, the
    scrape series of both targets) sampled every INTERVAL_S, at BYTES_PER_SAMPLE."""
    kept = set(str(_ctx(spec, stack)["kept_metrics"]).split("|"))
    dcgm = len({n for n in kept if n.startswith("DCGM_FI_")})
    ib = len({n for n in kept if n.startswith("node_infiniband_")})
    series = 0
    for part in spec.partitions:
        sku = partition_sku(part, cat)
        per_node = dcgm * sku.gpus + ib * sku.fabric.nics + 2 * SCRAPE_SERIES_PER_TARGET
        series += part.nodes * per_node
    gb_per_day = series * (86400 / INTERVAL_S) * BYTES_PER_SAMPLE / 1e9
    cap = retention_cap_gb(spec)
    return Retention(series, gb_per_day, cap, cap / gb_per_day if gb_per_day else RETENTION_DAYS)


def monitoring_config(spec: ClusterSpec, cat: Catalog) -> str:
    """/etc/gpu-clusters/monitoring.json, what gpucl_monitor reads: where to write, the ports to
    scrape, each partition's on-demand price (a partition whose type has no catalog price is
    left out, so its spend is no series rather than a false 0)."""
    prices = {
        p.name: price
        for p in spec.partitions
        if (price := partition_sku(p, cat).price.usd_per_hour) is not None
    }
    doc = {
        "cluster": spec.name,
        "drainPrefix": spec.health_checks.drain_prefix,
        "textfile": TEXTFILE,
        "targetsDir": TARGETS_DIR,
        "ports": {"node": PORTS["node"], "dcgm": PORTS["dcgm"]},
        "pricesUsdPerHour": prices,
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def dcgm_counters() -> str:
    return (_mon_dir() / "dcgm-counters.csv").read_text()


def dcgm_image(cat: Catalog) -> str:
    try:
        return dcgm_reference(cat)
    except (KeyError, TypeError) as exc:
        raise LookupError(f"config/versions.yaml monitoring.dcgmExporter: missing {exc}") from None


def dashboards() -> dict[str, str]:
    """The Grafana dashboards, by file name (import them with Grafana's Dashboards > Import; they
    ask for the Prometheus data source)."""
    folder = _mon_dir() / "dashboards"
    return {p.name: p.read_text() for p in sorted(folder.glob("*.json"))}


def render_monitoring_bundle(spec: ClusterSpec, stack: str, cat: Catalog) -> dict[str, str]:
    """What `plan --out` writes under monitoring/."""
    files = {
        "prometheus.yml": render_prometheus_config(spec, stack),
        "gpucl.rules.yml": render_alert_rules(spec, stack),
        "dcgm-counters.csv": dcgm_counters(),
        "monitoring.json": monitoring_config(spec, cat),
    }
    files.update({f"dashboards/{name}": text for name, text in dashboards().items()})
    return files


def scheduler_monitoring(spec: ClusterSpec, stack: str, cat: Catalog) -> dict[str, object]:
    """What the scheduler's user-data writes for monitoring."""
    return {
        "package": package_files("monitor", MONITOR_MODULES),
        "interval_s": INTERVAL_S,
        "config_path": MONITOR_CONFIG,
        "config": monitoring_config(spec, cat),
        "prom_config_path": PROM_CONFIG,
        "prom_config": render_prometheus_config(spec, stack),
        "rules_path": PROM_RULES,
        "rules": render_alert_rules(spec, stack),
        "targets_dir": TARGETS_DIR,
        "prom_args": prometheus_args(spec),
        "prom_data": PROM_DATA,
        # gpucl-power return writes, as slurm, the DOWN nodes whose VM bills beside its record;
        # root copies them into node_exporter's directory (a .tmp name it does not read, then a
        # rename: a scrape never reads half a file).
        "down_billing_from": down_billing_textfile(spec),
        "down_billing_to": f"{TEXTFILE_DIR}/{DOWN_BILLING_TEXTFILE}",
    }


def node_monitoring(cat: Catalog) -> dict[str, object]:
    """What a GPU node's user-data writes for monitoring (node_exporter is its package alone)."""
    return {
        "counters_path": DCGM_COUNTERS,
        "counters": dcgm_counters(),
        "counters_in_container": DCGM_COUNTERS_IN_CONTAINER,
        "dcgm_image": dcgm_image(cat),
        "dcgm_port": PORTS["dcgm"],
    }
