"""Monitoring of Kubernetes clusters: the pinned Prometheus chart collects the DCGM
exporter that already runs (GPU Operator or dcgm-exporter chart), node_exporter on every node and
kube-state-metrics, with our counters and alert rules. Checked here on what `helm template`
renders from the vendored charts with our values; a real Prometheus runs the rendered config
and rules against a Kubernetes API stand-in in tests/e2e/vm/test_vm_boot.py."""

from __future__ import annotations

import yaml

from clusterctl.render import monitoring, monitoring_k8s
from clusterctl.render.bundle import render_bundle
from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import GPU_TOLERATION, NODE_REASON_ANNOTATION
from clusterctl.spec.load import load_stack_spec
from clusterctl.validate.k8s_nodes import SUSPECT_TAINT
from tests.unit.render.test_helm_rendered_crds import rendered


def _objects(stack: str, *overrides: str) -> dict[str, list[dict]]:
    return rendered(stack, tuple(overrides))[1]


def _one(docs: list[dict], kind: str, name: str) -> dict:
    (doc,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def _tolerates(tolerations: list[dict], taint: dict) -> bool:
    """Kubernetes' rule (k8s.io/api core/v1 Toleration.ToleratesTaint)."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("key") and t["key"] != taint["key"]:
            continue
        if t.get("operator", "Equal") == "Exists" or t.get("value") == taint.get("value"):
            return True
    return False


def test_both_kubernetes_stacks_get_prometheus_last_at_the_pinned_chart() -> None:
    cat = catalog()
    pin = cat.versions["helmCharts"]["prometheus"]
    for stack in ("aws-p5", "aks-h100"):
        spec, _ = load_stack_spec(stack, [])
        addons = monitoring_k8s.cluster_helm_addons(spec, stack, cat)
        last = addons[-1]
        assert (last.release, last.namespace) == ("prometheus", "monitoring")
        assert (last.pin.chart, last.pin.version) == (pin["chart"], pin["version"])
        off, _ = load_stack_spec(stack, ["kubernetes.monitoring=false"])
        releases = [a.release for a in monitoring_k8s.cluster_helm_addons(off, stack, cat)]
        assert "prometheus" not in releases and releases == [a.release for a in addons[:-1]]


def test_the_gpu_operators_dcgm_exporter_serves_our_counters() -> None:
    docs = _objects("aks-h100")["gpu-operator"]
    counters = _one(docs, "ConfigMap", monitoring_k8s.DCGM_COUNTERS_CONFIGMAP)
    assert counters["data"]["dcgm-metrics.csv"].strip() == monitoring.dcgm_counters().strip()
    (policy,) = [d for d in docs if d["kind"] == "ClusterPolicy"]
    exporter = policy["spec"]["dcgmExporter"]
    assert exporter["config"]["name"] == monitoring_k8s.DCGM_COUNTERS_CONFIGMAP
    # no Prometheus Operator: its ServiceMonitor kind does not exist here
    assert exporter["serviceMonitor"]["enabled"] is False


def test_the_dcgm_exporter_chart_serves_our_counters_where_the_operator_is_not_used() -> None:
    docs = _objects("aws-p5", "kubernetes.kueue=true", "kubernetes.gpuDriver=managed")
    config = _one(docs["dcgm-exporter"], "ConfigMap", "exporter-metrics-config-map")
    assert config["data"]["metrics"].strip() == monitoring.dcgm_counters().strip()


def test_prometheus_scrapes_each_exporter_by_its_service_and_nothing_by_annotation() -> None:
    docs = _objects("aws-p5")["prometheus"]
    config = yaml.safe_load(_one(docs, "ConfigMap", "prometheus-server")["data"]["prometheus.yml"])
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    assert {"dcgm", "node", "kube-state-metrics", "prometheus"} <= set(jobs)
    # the GPU Operator's DCGM Service carries prometheus.io/scrape: an annotation job would
    # scrape it a second time, without the node's name
    for job in jobs.values():
        for rule in job.get("relabel_configs", []):
            assert not any("annotation_prometheus_io" in s for s in rule.get("source_labels", []))
    for name in ("dcgm", "node", "kube-state-metrics"):
        targets = [r["target_label"] for r in jobs[name]["relabel_configs"] if "target_label" in r]
        assert targets == ["node"], jobs[name]
    assert jobs["kube-state-metrics"]["honor_labels"] is True
    assert config["global"]["external_labels"] == {"cluster": "eks-p5"}
    assert "/etc/config/alerting_rules.yml" in config["rule_files"]


def test_node_exporter_runs_on_gpu_nodes_even_when_validate_took_one_out() -> None:
    docs = _objects("aks-h100")["prometheus"]
    ds = _one(docs, "DaemonSet", "prometheus-prometheus-node-exporter")
    tolerations = ds["spec"]["template"]["spec"]["tolerations"]
    assert _tolerates(tolerations, {**GPU_TOLERATION, "value": ""})
    assert _tolerates(tolerations, SUSPECT_TAINT)


def test_kube_state_metrics_exports_validates_reason_for_a_cordoned_node() -> None:
    docs = _objects("aks-h100")["prometheus"]
    ksm = _one(docs, "Deployment", "prometheus-kube-state-metrics")
    args = ksm["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--metric-annotations-allowlist=nodes=[{NODE_REASON_ANNOTATION}]" in args, args
    rules = yaml.safe_load(
        _one(docs, "ConfigMap", "prometheus-server")["data"]["alerting_rules.yml"]
    )
    (cordoned,) = [r for r in rules["groups"][0]["rules"] if r["alert"] == "NodeCordoned"]
    assert monitoring_k8s.REASON_LABEL in cordoned["expr"]


def test_prometheus_keeps_30_days_and_stops_before_its_volume_is_full() -> None:
    docs = _objects("aws-p5")["prometheus"]
    pvc = _one(docs, "PersistentVolumeClaim", "prometheus-server")
    size = pvc["spec"]["resources"]["requests"]["storage"]
    assert size == f"{monitoring_k8s.VOLUME_GIB}Gi"
    server = _one(docs, "Deployment", "prometheus-server")["spec"]["template"]["spec"]
    (container,) = [c for c in server["containers"] if c["name"] == "prometheus-server"]
    assert "--storage.tsdb.retention.time=30d" in container["args"]
    assert f"--storage.tsdb.retention.size={monitoring_k8s.RETENTION_GB}GB" in container["args"]
    assert monitoring_k8s.RETENTION_GB * 1e9 < monitoring_k8s.VOLUME_GIB * 2**30
    # alerts are evaluated in Prometheus; nothing half-configured sends them anywhere
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert not [k for k in kinds if "alertmanager" in k[1] or "pushgateway" in k[1]], kinds


def test_rules_name_only_series_their_cluster_has() -> None:
    k8s, _ = load_stack_spec("aks-h100", [])
    slurm, _ = load_stack_spec("azure-h100", [])
    k8s_rules = monitoring_k8s.alert_rules(k8s, "aks-h100")
    slurm_rules = monitoring.render_alert_rules(slurm, "azure-h100")
    assert "gpucl_slurm" not in k8s_rules and "kube_" in k8s_rules
    assert "kube_" not in slurm_rules and "gpucl_slurm" in slurm_rules
    shared = {"GpuXidError", "GpuTooHot", "GpuRowRemapFailure", "InfinibandPortDown"}
    for text in (k8s_rules, slurm_rules):
        names = {r["alert"] for r in yaml.safe_load(text)["groups"][0]["rules"]}
        assert shared <= names
    bundle = render_bundle(k8s, "aks-h100")
    assert bundle["monitoring/gpucl.rules.yml"] == k8s_rules
    assert "monitoring/dashboards/gpucl-gpus.json" in bundle
    assert "monitoring/dashboards/gpucl-slurm.json" not in bundle
    assert "k8s/helm/prometheus.values.yaml" in bundle
    off, _ = load_stack_spec("aks-h100", ["kubernetes.monitoring=false"])
    assert not [
        k for k in render_bundle(off, "aks-h100") if "prometheus" in k or "monitoring/" in k
    ]
