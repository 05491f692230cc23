"""Monitoring of Slurm clusters: the scheduler's Slurm exporter (clusterctl/monitor,
pure parsing and rendering), and the contract between the dashboards, the alert rules, the DCGM
exporter's counters file and what the exporters write. The VM sandbox runs it all for real
(tests/e2e/vm/test_vm_boot.py)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from clusterctl.monitor import slurm_metrics as sm
from clusterctl.power import down_billing
from clusterctl.render import monitoring
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec

# sinfo -h -N -o "%N|%P|%T|%o|%E" as Slurm 24.11 prints it: power suffixes on the state, the
# default partition's `*`, "none" for no reason.
SINFO = """\
gpu-pg0-1|gpu*|idle~|gpu-pg0-1|none
gpu-pg0-2|gpu*|drained|10.1.0.6|gpucl: nhc: check_nv_smi: GPU count 7 != 8
gpu-pg0-3|gpu*|allocated|10.1.0.7|none
gpu-pg0-4|gpu*|idle#|10.1.0.8|none
gpu-pg0-5|gpu*|down*|10.1.0.9|Not responding
gpu-pg0-6|gpu*|drained~|gpu-pg0-6|bad fan, ticket 42 "urgent"
gpu-pg0-7|gpu*|mixed|10.1.0.11|none
gpu-pg0-8|gpu*|draining|10.1.0.12|gpucl-deep: dcgm_diag failed
"""
PENDING = "gpu|2026-11-26T10:00:00\ngpu,other|2026-11-26T10:30:00\nbad|Unknown\n"
RUNNING = "gpu\ngpu\n"


def _value(text: str, series: str) -> float:
    line = next(x for x in text.splitlines() if x.startswith(series + " "))
    return float(line.rsplit(" ", 1)[1])


def test_each_node_is_shown_in_one_state_a_drain_first() -> None:
    nodes = sm.parse_nodes(SINFO)
    assert [n.partition for n in nodes] == ["gpu"] * 8
    shown = {n.name: n.shown for n in nodes}
    assert shown == {
        "gpu-pg0-1": "powered_down",
        "gpu-pg0-2": "drained",
        "gpu-pg0-3": "allocated",
        "gpu-pg0-4": "powering_up",
        "gpu-pg0-5": "down",
        "gpu-pg0-6": "drained",  # drained and powered down: someone has to act
        "gpu-pg0-7": "mixed",
        "gpu-pg0-8": "draining",
    }


def test_metrics_count_states_name_each_drain_and_its_owner_and_price_only_existing_vms() -> None:
    nodes = sm.parse_nodes(SINFO)
    now = sm.parse_pending("gpu|2026-11-26T10:40:00")[0][1]
    text = sm.render(
        nodes, sm.parse_pending(PENDING), RUNNING.split(), {"gpu": 10.0}, "gpucl:", now
    )
    assert _value(text, 'gpucl_slurm_nodes{partition="gpu",state="drained"}') == 2
    assert _value(text, 'gpucl_slurm_nodes{partition="gpu",state="idle"}') == 0  # written, 0
    assert (
        sum(_value(text, f'gpucl_slurm_nodes{{partition="gpu",state="{s}"}}') for s in sm.STATES)
        == 8
    )
    drained = [x for x in text.splitlines() if x.startswith("gpucl_slurm_node_drained{")]
    assert len(drained) == 3
    assert any('node="gpu-pg0-2"' in x and 'owner="health"' in x for x in drained)
    assert any('node="gpu-pg0-8"' in x and 'owner="deep"' in x for x in drained)
    admin = next(x for x in drained if 'node="gpu-pg0-6"' in x)
    assert 'owner="admin"' in admin and r'reason="bad fan, ticket 42 \"urgent\""' in admin
    assert _value(text, 'gpucl_slurm_jobs{partition="gpu",state="pending"}') == 2
    assert _value(text, 'gpucl_slurm_jobs{partition="gpu",state="running"}') == 2
    assert _value(text, 'gpucl_slurm_oldest_pending_seconds{partition="gpu"}') == 2400
    # every node but the two powered down (~) is a VM that bills
    assert _value(text, 'gpucl_cost_usd_per_hour{partition="gpu"}') == 60.0


def test_only_powered_up_nodes_are_scrape_targets_labelled_by_slurm_name() -> None:
    got = sm.targets(sm.parse_nodes(SINFO), 9400)
    names = [t["labels"]["node"] for t in got]
    assert names == ["gpu-pg0-2", "gpu-pg0-3", "gpu-pg0-5", "gpu-pg0-7", "gpu-pg0-8"]
    assert got[0]["targets"] == ["10.1.0.6:9400"]


def test_a_silent_slurm_keeps_the_last_files_and_says_so(tmp_path, capsys) -> None:
    config = json.loads(monitoring.monitoring_config(load_stack_spec("azure-h100")[0], catalog()))
    config["textfile"] = str(tmp_path / "x.prom")
    config["targetsDir"] = str(tmp_path / "t")

    def down(argv):
        raise RuntimeError("slurm_load_node error: Unable to contact slurm controller")

    with pytest.raises(RuntimeError):
        sm.collect(config, runner=down)
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config))
    (tmp_path / "x.prom").write_text("old\n")
    # main() with sinfo absent or failing: exit 1, one line, the old file kept
    rc = sm.main([str(path)])
    assert rc == 1 and (tmp_path / "x.prom").read_text() == "old\n"
    assert "Slurm did not answer" in capsys.readouterr().err


def _exprs(text: str) -> list[str]:
    return [t["expr"] for p in json.loads(text)["panels"] for t in p["targets"]]


def _metric_names(expr: str) -> set[str]:
    funcs = {"avg", "sum", "max", "min", "by", "rate", "avg_over_time", "time", "without"}
    words = set(re.findall(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*\b(?!\s*=)", re.sub(r"\{[^}]*\}", "", expr)))
    words -= funcs
    return {w for w in words if "_" in w and not re.fullmatch(r"\d+[smhd]", w)}


def test_every_metric_a_dashboard_or_rule_reads_is_one_an_exporter_writes() -> None:
    spec = load_stack_spec("azure-h100")[0]
    counters = {
        line.split(",")[0].strip()
        for line in monitoring.dcgm_counters().splitlines()
        if line.strip() and not line.startswith("#")
    }
    text = sm.render(sm.parse_nodes(SINFO), [], [], {"gpu": 1.0}, "gpucl:", 0.0)
    ours = {x.split()[2] for x in text.splitlines() if x.startswith("# TYPE")}
    # the power program's down-billing textfile, with a priced node so every family is written
    billing = down_billing.to_textfile(
        {"checkedAt": 1.0, "nodes": [{"node": "gpu-pg0-1", "vm": "vm_1", "power": "running",
                                    "reason": "r", "usdPerHour": 98.32, "deallocateSent": True}]}
    )  # fmt: skip
    ours |= {x.split()[2] for x in billing.splitlines() if x.startswith("# TYPE")}
    node_exporter = {
        "node_infiniband_state_id",
        "node_infiniband_port_data_transmitted_bytes_total",
        "node_infiniband_port_data_received_bytes_total",
    }
    rules = yaml.safe_load(monitoring.render_alert_rules(spec, "azure-h100"))
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    for text_ in monitoring.dashboards().values():
        exprs += _exprs(text_)
    assert len(exprs) >= 20
    unknown, read = set(), set()
    for expr in exprs:
        for name in _metric_names(expr):
            read.add(name)
            if name.startswith("DCGM_FI_"):
                ok = name in counters
            elif name.startswith("gpucl_"):
                ok = name in ours
            else:
                ok = name in node_exporter or name == "up"
            if not ok:
                unknown.add(name)
    assert unknown == set()
    assert len(read) >= 15  # the names were found, not skipped


def test_dashboards_are_grafana_imports_that_ask_for_their_prometheus() -> None:
    boards = monitoring.dashboards()
    assert set(boards) == {"gpucl-gpus.json", "gpucl-slurm.json"}
    for name, text in boards.items():
        doc = json.loads(text)
        assert doc["__inputs"][0]["pluginId"] == "prometheus", name
        assert doc["uid"] and doc["panels"], name
        for panel in doc["panels"]:
            assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", (name, panel["title"])
            assert panel["targets"] and all(t["expr"] for t in panel["targets"])


def test_the_scheduler_runs_prometheus_on_localhost_with_our_rules_and_exporter() -> None:
    from clusterctl.render.cloud_init import render_cloud_init

    spec = load_stack_spec("azure-h100")[0]
    doc = yaml.safe_load(render_cloud_init(spec, "azure-h100", munge_key_b64="eA=="))
    paths = {f["path"]: f for f in doc["write_files"]}
    assert {"prometheus", "prometheus-node-exporter"} <= {
        p for p in doc["packages"] if isinstance(p, str)
    }
    dropin = paths["/etc/systemd/system/prometheus.service.d/50-gpu-clusters.conf"]["content"]
    assert "--web.listen-address=127.0.0.1:9090" in dropin
    assert f"--config.file={monitoring.PROM_CONFIG}" in dropin
    # its data on the data disk (kept by a re-created scheduler), capped at a tenth of it
    assert f"--storage.tsdb.path={monitoring.PROM_DATA}" in dropin
    assert monitoring.PROM_DATA.startswith("/shared/")
    assert f"RequiresMountsFor={monitoring.PROM_DATA}" in dropin
    assert f"--storage.tsdb.retention.size={spec.storage.size_gib // 10}GB" in dropin
    prom = yaml.safe_load(paths[monitoring.PROM_CONFIG]["content"])
    assert prom["rule_files"] == [monitoring.PROM_RULES]
    jobs = {j["job_name"]: j for j in prom["scrape_configs"]}
    assert jobs["dcgm"]["file_sd_configs"][0]["files"] == [f"{monitoring.TARGETS_DIR}/dcgm.json"]
    # the Slurm exporter's `node` label survives the scheduler's own target label
    assert ["exported_node"] in [
        r.get("source_labels") for r in jobs["node"]["metric_relabel_configs"]
    ]
    cfg = json.loads(paths[monitoring.MONITOR_CONFIG]["content"])
    price = catalog().get(spec.partitions[0].sku, "azure").price.usd_per_hour
    assert cfg["pricesUsdPerHour"] == {spec.partitions[0].name: price}
    assert any("gpucl-slurm-metrics.timer" in " ".join(map(str, c)) for c in doc["runcmd"])
    assert any(p.endswith("gpucl_monitor/slurm_metrics.py") for p in paths)


def test_gpu_nodes_run_the_pinned_dcgm_exporter_with_our_counters_file() -> None:
    from clusterctl.render.cloud_init import render_cloud_init

    spec = load_stack_spec("azure-h100")[0]
    doc = yaml.safe_load(
        render_cloud_init(spec, "azure-h100", munge_key_b64="eA==", partition=spec.partitions[0])
    )
    paths = {f["path"]: f for f in doc["write_files"]}
    assert "prometheus-node-exporter" in doc["packages"]
    unit = paths["/etc/systemd/system/gpucl-dcgm-exporter.service"]["content"]
    image = catalog().versions["monitoring"]["dcgmExporter"]["image"]
    assert f"{image} -f {monitoring.DCGM_COUNTERS_IN_CONTAINER}" in unit
    assert f"-v {monitoring.DCGM_COUNTERS}:{monitoring.DCGM_COUNTERS_IN_CONTAINER}:ro" in unit
    assert paths[monitoring.DCGM_COUNTERS]["content"] == monitoring.dcgm_counters()


def test_custom_data_over_azures_cap_is_refused_with_its_size() -> None:
    import os

    from clusterctl.render.cloud_init import azure_custom_data

    noise = os.urandom(70 * 1024).hex()  # does not compress below the cap
    with pytest.raises(ValueError, match="over Azure's customData cap of 65536"):
        azure_custom_data("#cloud-config\n# Scheduler node of cluster x\n" + noise)


def test_a_drains_owner_is_read_from_its_prefix() -> None:
    owner = sm.drain_owner
    assert owner("gpucl: nhc: GPU count 7 != 8", "gpucl:") == "health"
    assert owner("gpucl: power: start failed", "gpucl:") == "health"
    assert owner("gpucl-deep: dcgm_diag", "gpucl:") == "deep"
    assert owner("gpucl-nccl: busbw 12 < 40", "gpucl:") == "nccl"
    assert owner("gpuclx: mine", "gpucl:") == "admin"
    assert owner("rack inspection", "gpucl:") == "admin"
    assert owner("ops: fan", "ops:") == "health" and owner("ops-deep: x", "ops:") == "deep"


def _kept(prom: dict, job: str) -> re.Pattern[str]:
    """The job's `keep` rule by name, anchored as Prometheus anchors it."""
    (rule,) = [
        r
        for r in next(j for j in prom["scrape_configs"] if j["job_name"] == job)[
            "metric_relabel_configs"
        ]
        if r.get("action") == "keep"
    ]
    assert rule["source_labels"] == ["__name__"]
    return re.compile(f"^(?:{rule['regex']})$")


def test_the_scrapes_keep_the_series_a_rule_or_panel_reads_and_drop_the_rest() -> None:
    """node_exporter's and the DCGM exporter's series nobody reads never reach the disk: at a
    thousand nodes they are ~1.9 M series, which the size cap would trade for weeks of history."""
    spec = load_stack_spec("azure-h100")[0]
    prom = yaml.safe_load(monitoring.render_prometheus_config(spec, "azure-h100"))
    node, dcgm = _kept(prom, "node"), _kept(prom, "dcgm")
    # read by alert rules (GpuXidError, IbPortDown, NodeDrained) and by panels
    for name in ("DCGM_FI_DEV_XID_ERRORS", "node_infiniband_state_id", "gpucl_slurm_node_drained"):
        assert node.match(name) and dcgm.match(name), name
    assert dcgm.match("DCGM_FI_DEV_GPU_UTIL")  # the GPU utilisation panel
    # read by nothing: the CPU's per-core series, a DCGM field the counters file collects
    for name in ("node_cpu_seconds_total", "DCGM_FI_DEV_MEMORY_TEMP", "node_infiniband_info"):
        assert not node.match(name) and not dcgm.match(name), name
    # the regex follows the rules and dashboards, not a list kept by hand
    rules = yaml.safe_load(monitoring.render_alert_rules(spec, "azure-h100"))
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    exprs += [e for text_ in monitoring.dashboards().values() for e in _exprs(text_)]
    for expr in exprs:
        for name in _metric_names(expr):
            assert node.match(name) and dcgm.match(name), (name, expr)


def test_metric_names_are_told_from_functions_labels_and_durations() -> None:
    expr = (
        'sum by (node, gpu) (rate(a_total{job="x}", b=~"y"}[5m] offset 1h)) / on (node) '
        "group_left (reason) c:ratio * 1e3 > bool 2 and time() - inf"
    )
    assert monitoring.metric_names(expr) == {"a_total", "c:ratio"}


@pytest.mark.integration
def test_promtool_accepts_the_rendered_config_and_rules(tmp_path) -> None:
    import subprocess

    from tests.conftest import need_tool

    promtool = need_tool("promtool")
    spec = load_stack_spec("azure-h100")[0]
    rules = tmp_path / "gpucl.rules.yml"
    rules.write_text(monitoring.render_alert_rules(spec, "azure-h100"))
    config = tmp_path / "prometheus.yml"
    config.write_text(
        monitoring.render_prometheus_config(spec, "azure-h100")
        .replace(monitoring.PROM_RULES, str(rules))
        .replace(monitoring.TARGETS_DIR, str(tmp_path))
    )
    for args in (["check", "rules", str(rules)], ["check", "config", str(config)]):
        done = subprocess.run([promtool, *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("nodes", "size_gib", "short"), [(1000, 1024, False), (1000, 128, True)])
def test_plan_says_how_many_days_the_data_disk_holds(nodes: int, size_gib: int, short) -> None:
    from clusterctl.plan.program import _prometheus_retention
    from clusterctl.spec.load import load_stack_spec as load

    spec = load("azure-h100", [f"partitions[0].nodes={nodes}", f"storage.sizeGib={size_gib}"])[0]
    r = monitoring.retention(spec, "azure-h100", catalog())
    # 8 GPUs x the DCGM fields read + 8 IB ports x the node_exporter series read + scrape series
    assert 60 <= r.series / nodes <= 150
    assert r.cap_gb == size_gib // 10 and r.short is short
    finding = _prometheus_retention(spec, "azure-h100")
    assert f"holds about {r.days:.0f} days" in finding.message
    if short:
        assert finding.level == "warning" and finding.field is not None
        assert finding.field.endswith("storage.sizeGib")
        need = int(finding.message.rsplit("at least ", 1)[1].split()[0])
        bigger = load("azure-h100", [f"partitions[0].nodes={nodes}", f"storage.sizeGib={need}"])[0]
        assert not monitoring.retention(bigger, "azure-h100", catalog()).short
    else:
        assert finding.level == "info"
