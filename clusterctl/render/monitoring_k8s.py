"""Monitoring of a Kubernetes cluster: the pinned Prometheus chart (prometheus-community's
`prometheus`, no Prometheus Operator) collecting the DCGM exporter the GPU Operator or the
dcgm-exporter chart already runs, node_exporter on every node (its InfiniBand collector included)
and kube-state-metrics, with the same alert rules as Slurm clusters where they apply. Also the
counters the DCGM exporter serves (the fields the dashboards read). Pure: spec in, Helm values
out; components/k8s/ installs them and `plan --out` writes them."""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

import yaml

from clusterctl.render.monitoring import (
    GPU_TEMP_ALERT_C,
    INTERVAL_S,
    PORTS,
    dashboards,
    dcgm_counters,
)
from clusterctl.render.templates import render_template
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.kubernetes import NODE_REASON_ANNOTATION
from clusterctl.spec.kubernetes_addons import HelmAddon, chart_pins, helm_addons
from clusterctl.spec.model import ClusterSpec

NAMESPACE = "monitoring"
RELEASE = "prometheus"
SERVER_SERVICE = f"{RELEASE}-server"
"""The chart's server Service (port 80): `kubectl -n monitoring port-forward svc/prometheus-server
9090:80`."""
DCGM_COUNTERS_CONFIGMAP = "gpucl-dcgm-counters"
RETENTION_DAYS = 30
VOLUME_GIB = 50
RETENTION_GB = 45
"""Below the volume's size: Prometheus deletes the oldest blocks before the disk fills."""

REASON_LABEL = "annotation_" + re.sub(r"[^a-zA-Z0-9_]", "_", NODE_REASON_ANNOTATION)
"""kube-state-metrics' label for that annotation in kube_node_annotations (other characters: _)."""

# The chart's default jobs that scrape whatever carries `prometheus.io/scrape`: the GPU
# Operator's DCGM service and the subcharts' services carry it, so they would be scraped twice
# (once there, once by our jobs, which name the node). Ours replace them.
ANNOTATION_JOBS = (
    "kubernetes-service-endpoints",
    "kubernetes-service-endpoints-slow",
    "kubernetes-services",
    "kubernetes-pods",
    "kubernetes-pods-slow",
    "prometheus-pushgateway",
)


def _service_job(
    keep_regex: str, honor_labels: bool = False, port: str | None = None
) -> dict[str, Any]:
    """A job over the endpoints of the Services whose labels match keep_regex (matched against
    `app;app.kubernetes.io/name`), each target labelled with the node its pod runs on."""
    relabel: list[dict[str, Any]] = [
        {
            "source_labels": [
                "__meta_kubernetes_service_label_app",
                "__meta_kubernetes_service_label_app_kubernetes_io_name",
            ],
            "regex": keep_regex,
            "action": "keep",
        },
    ]
    if port:
        relabel.append(
            {
                "source_labels": ["__meta_kubernetes_endpointslice_port_name"],
                "regex": port,
                "action": "keep",
            }
        )
    relabel.append({"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "node"})
    job: dict[str, Any] = {
        "kubernetes_sd_configs": [{"role": "endpointslice"}],
        "relabel_configs": relabel,
    }
    if honor_labels:
        job["honor_labels"] = True
    return job


def scrape_configs() -> dict[str, Any]:
    """The chart's `scrapeConfigs` map: ours added, the annotation-driven defaults off."""
    jobs: dict[str, Any] = {name: {"enabled": False} for name in ANNOTATION_JOBS}
    # The GPU Operator's service is `app: nvidia-dcgm-exporter` (its assets/state-dcgm-exporter),
    # the dcgm-exporter chart's `app.kubernetes.io/name: dcgm-exporter`.
    jobs["dcgm"] = _service_job("nvidia-dcgm-exporter;.*|.*;dcgm-exporter")
    jobs["node"] = _service_job(".*;prometheus-node-exporter")
    # kube-state-metrics' series name the objects they are about (node, namespace, pod).
    jobs["kube-state-metrics"] = _service_job(
        ".*;kube-state-metrics", honor_labels=True, port="http"
    )
    return jobs


def alert_rules(spec: ClusterSpec, stack: str) -> str:
    return render_template(
        "monitoring/gpucl.rules.yml.j2",
        cluster=spec.name,
        stack=stack,
        ports=PORTS,
        gpu_temp_c=GPU_TEMP_ALERT_C,
        slurm=False,
        namespace=NAMESPACE,
        server_service=SERVER_SERVICE,
        reason_annotation=NODE_REASON_ANNOTATION,
        reason_label=REASON_LABEL,
    )


def prometheus_values(spec: ClusterSpec, stack: str) -> dict[str, Any]:
    return {
        "server": {
            "global": {
                "scrape_interval": f"{INTERVAL_S}s",
                "scrape_timeout": "10s",
                "evaluation_interval": f"{INTERVAL_S}s",
                "external_labels": {"cluster": spec.name},
            },
            "retention": f"{RETENTION_DAYS}d",
            "retentionSize": f"{RETENTION_GB}GB",
            "persistentVolume": {"enabled": True, "size": f"{VOLUME_GIB}Gi"},
        },
        "scrapeConfigs": scrape_configs(),
        "serverFiles": {"alerting_rules.yml": yaml.safe_load(alert_rules(spec, stack))},
        # Alerts show in Prometheus' /alerts; where they are sent is the team's
        # (docs/monitoring.md).
        "alertmanager": {"enabled": False},
        "prometheus-pushgateway": {"enabled": False},
        "kube-state-metrics": {
            "metricAnnotationsAllowList": [f"nodes=[{NODE_REASON_ANNOTATION}]"],
        },
    }


def _with_counters(addon: HelmAddon) -> HelmAddon:
    """The DCGM exporter serves our counters (the fields the dashboards and rules read)."""
    values = copy.deepcopy(addon.values)
    if addon.release == "gpu-operator" and values.get("dcgmExporter", {}).get("enabled"):
        values["dcgmExporter"]["config"] = {
            "name": DCGM_COUNTERS_CONFIGMAP,
            "create": True,
            "data": dcgm_counters(),
        }
    elif addon.release == "dcgm-exporter":
        values["customMetrics"] = dcgm_counters()
    else:
        return addon
    return dataclasses.replace(addon, values=values)


def cluster_helm_addons(spec: ClusterSpec, stack: str, cat: Catalog) -> list[HelmAddon]:
    """Every Helm release of the cluster, in install order: the GPU and network add-ons
    (clusterctl/spec/kubernetes_addons.py) and, with kubernetes.monitoring, Prometheus last."""
    addons = helm_addons(spec, stack, cat)
    if not spec.kubernetes.monitoring:
        return addons
    addons = [_with_counters(a) for a in addons]
    pin = chart_pins(cat)[RELEASE]
    return [*addons, HelmAddon(RELEASE, NAMESPACE, pin, prometheus_values(spec, stack))]


GPU_DASHBOARDS = ("gpucl-gpus.json",)
"""The dashboards that apply to a Kubernetes cluster (the other reads the Slurm exporter)."""


def render_k8s_monitoring_bundle(spec: ClusterSpec, stack: str) -> dict[str, str]:
    """What `plan --out` writes under monitoring/ for a Kubernetes stack with monitoring: the
    alert rules (also in helm/prometheus.values.yaml) and the GPU dashboard."""
    if not spec.kubernetes.monitoring:
        return {}
    files = {"gpucl.rules.yml": alert_rules(spec, stack)}
    files.update({f"dashboards/{n}": t for n, t in dashboards().items() if n in GPU_DASHBOARDS})
    return files
