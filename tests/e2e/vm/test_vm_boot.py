"""The VM sandbox boots a scheduler and a GPU node from azure-h100's rendered user-data: real
systemd as PID 1, real cloud-init from a NoCloud seed. Root only (netns, mounts, nspawn)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
import yaml

from clusterctl.sandbox.vm import boot, faults, substitutions, vmstate
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def booted(tmp_path_factory):
    with booted_stack(tmp_path_factory, nodes=1) as cluster:
        yield cluster


def test_cloud_init_ran_every_stage_on_both(booted):
    specs, workdir, reports = booted
    assert [s.role for s in specs] == ["scheduler", "gpu"]
    for spec in specs:
        report = reports[spec.name]
        assert report["cloud_init"] in ("done", "error"), report  # finished, not stuck or absent
        finished = boot.run(
            workdir, spec.name, ["test", "-e", "/var/lib/cloud/instance/boot-finished"]
        )
        assert finished.returncode == 0, f"{spec.name}: cloud-init final stage never finished"
        pid1 = boot.run(workdir, spec.name, ["cat", "/proc/1/comm"]).stdout.strip()
        assert pid1 == "systemd"


def test_node_got_the_clouds_user_data_except_declared_substitutions(booted):
    specs, workdir, _ = booted
    key = (workdir / "logs" / "repo-key.asc").read_text()
    for spec in specs:
        # cloud-init keeps what it got, gzipped as Azure's customData carries it
        seen = boot.run(
            workdir, spec.name, ["zcat", "/var/lib/cloud/instance/user-data.txt"]
        ).stdout
        commits = json.loads((workdir / "logs" / "pinned-commits.json").read_text())
        assert seen == substitutions.rewrite_user_data(spec.user_data, key, commits)
        # the declared edits only: the Microsoft source's URL and key, slurm.conf's node size,
        # the stand-ins' commits in place of the pinned ones
        changed = set(seen.splitlines()) - set(spec.user_data.splitlines())
        undeclared = [
            line
            for line in changed
            if not (
                substitutions.MS_STANDIN_URL in line
                or substitutions.NODE_SIZE_LINE in line
                or any(standin in line for standin in commits.values())
                or line.lstrip().startswith(("key:", "-----"))
                or line.startswith(" " * 8)
            )
        ]
        assert undeclared == [], undeclared


def test_the_nodes_disks_live_on_the_sandboxs_own_ext4(booted):
    """Not on the host's root (ext4 without a journal here: each new inode is checked against
    recently deleted ones); `down` then drops one file."""
    specs, workdir, _ = booted
    nodes = workdir.resolve() / "nodes"
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    mounts = {ln.split()[4]: ln.split(" - ")[1].split()[:2] for ln in lines}
    assert mounts.get(str(nodes), [None])[0] == "ext4", mounts.get(str(nodes))
    assert mounts[str(nodes)][1].startswith("/dev/loop")
    for spec in specs:
        upper = nodes / spec.name / "upper"
        assert upper.is_dir() and upper.stat().st_dev == nodes.stat().st_dev


def test_node_name_from_imds_stand_in(booted):
    specs, workdir, _ = booted
    gpu = specs[1]
    name = boot.run(workdir, gpu.name, ["/usr/local/libexec/gpu-clusters/node-name.sh"])
    assert name.stdout.strip() == "gpu-pg0-1", name.stderr


def test_slurmctld_reaches_a_node_by_its_registration_address_not_by_dns(booted):
    """On Azure the Slurm name gpu-pg0-1 has no DNS record (Azure DNS knows the VM's computer
    name). The sandbox's own /etc/hosts names only the VMs, as Azure DNS does; slurmctld must take
    the node's address from its registration (SchedMD node_mgr.c, for CLOUD nodes: the registering
    connection's peer address). Users' tools then resolve the Slurm name only through the block
    gpucl-hosts.sh writes from what slurmctld holds, never from a name the sandbox gave."""
    specs, workdir, _ = booted
    sched, gpu = specs[0], specs[1]
    address = vmstate.load(workdir).nodes[gpu.name]["address"]
    show = boot.run(workdir, sched.name, ["scontrol", "show", "node", "gpu-pg0-1"]).stdout
    assert f"NodeAddr={address} " in show, show
    # the scheduler publishes every 30 s (gpucl-hosts.timer): the node may have registered since
    deadline, hosts = time.monotonic() + 90, []
    while time.monotonic() < deadline:
        hosts = boot.run(workdir, sched.name, ["cat", "/etc/hosts"]).stdout.splitlines()
        if any(ln.split()[1:] == ["gpu-pg0-1"] for ln in hosts):
            break
        time.sleep(3)
    begin = next(i for i, ln in enumerate(hosts) if ln.startswith("# BEGIN gpu-clusters Slurm"))
    end = next(i for i, ln in enumerate(hosts) if ln.startswith("# END gpu-clusters Slurm"))
    outside = hosts[:begin] + hosts[end + 1 :]
    assert not [ln for ln in outside if "gpu-pg0-1" in ln.split()[1:]], outside
    assert f"{address} gpu-pg0-1" in [" ".join(ln.split()) for ln in hosts[begin:end]], hosts
    lookup = boot.run(workdir, sched.name, ["getent", "hosts", "gpu-pg0-1"])
    assert lookup.stdout.split() == [address, "gpu-pg0-1"], lookup.stdout


def _unit(workdir, node: str, unit: str) -> dict[str, str]:
    props = "ActiveState,MainPID,NRestarts"
    out = boot.run(workdir, node, ["systemctl", "show", "-p", props, unit]).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def test_a_killed_slurmctld_and_slurmd_come_back_by_themselves(booted):
    """The user-data's restart drop-in, not anyone else, brings a SIGKILLed
    daemon back (systemd counts the restart), and the cluster runs a job on the node again."""
    specs, workdir, _ = booted
    scheduler, gpu = specs
    for node, daemon in ((scheduler.name, "slurmctld"), (gpu.name, "slurmd")):
        before = _unit(workdir, node, daemon)
        assert before["ActiveState"] == "active", (node, before)
        boot.run(workdir, node, ["pkill", "-KILL", "-x", daemon])
        deadline = time.monotonic() + 90
        now = before
        while time.monotonic() < deadline:
            now = _unit(workdir, node, daemon)
            if now["ActiveState"] == "active" and now["MainPID"] not in ("0", before["MainPID"]):
                break
            time.sleep(2)
        assert now["ActiveState"] == "active", (node, daemon, now)
        assert now["MainPID"] != before["MainPID"], (node, daemon, now)
        assert int(now["NRestarts"]) == int(before["NRestarts"]) + 1, (node, daemon, now)
    job = boot.run(
        workdir,
        scheduler.name,
        ["timeout", "180", "srun", "-N1", "-w", "gpu-pg0-1", "hostname"],
        timeout=200,
    )
    assert job.returncode == 0 and job.stdout.strip() == "gpu-pg0-1", job.stdout + job.stderr


def test_reboot_brings_the_node_back_with_its_mounts(booted):
    specs, workdir, _ = booted
    scheduler, gpu = specs
    boot.run(workdir, scheduler.name, ["sh", "-c", "echo kept > /shared/home/reboot-marker"])
    report_after = boot.reboot(workdir, gpu.name, log=lambda _m: None)
    assert report_after["cloud_init"] in ("done", "error")
    assert boot.run(workdir, gpu.name, ["hostname"]).stdout.strip() == "gpu-pg0-1"
    marker = boot.run(workdir, gpu.name, ["cat", "/home/reboot-marker"])  # NFS stand-in again
    assert marker.stdout.strip() == "kept", marker.stderr


IMDS_TOKEN = (
    "curl -sS -o /dev/null -w '%{http_code}' -H Metadata:true "
    "'http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01"
    "&resource=https://management.azure.com/'"
)


def _imds_as(workdir, node: str, user: str) -> str:
    """What `curl` to the IMDS token endpoint gets as `user` on `node`: HTTP code or error."""
    cmd = IMDS_TOKEN if user == "root" else f"runuser -u {user} -- {IMDS_TOKEN}"
    got = boot.run(workdir, node, ["sh", "-c", cmd])
    return got.stdout.strip() if got.returncode == 0 else f"curl {got.returncode}: {got.stderr}"


def test_only_root_and_slurm_reach_the_power_identity_before_and_after_a_reboot(booted):
    """The scheduler's identity may stop every GPU VM, and users log in there. The
    IMDS stand-in hands the scheduler's VM a token as Azure does; the user-data's guard lets
    only root and slurm (the power program) reach it, and comes back with every boot."""
    specs, workdir, _ = booted
    scheduler, gpu = specs
    for _ in range(2):
        assert _imds_as(workdir, scheduler.name, "root") == "200"
        assert _imds_as(workdir, scheduler.name, "slurm") == "200"
        refused = _imds_as(workdir, scheduler.name, "azureuser")
        assert refused.startswith("curl 7:"), refused  # the connection reset, nothing served
        rules = boot.run(workdir, scheduler.name, ["iptables", "-S", "OUTPUT"]).stdout
        assert rules.count("169.254.169.254") == 1, rules
        boot.reboot(workdir, scheduler.name, log=lambda _m: None)
    assert _imds_as(workdir, gpu.name, "root") == "400"  # a GPU node holds no identity


def test_no_user_on_a_node_can_read_the_munge_key(booted):
    """The munge key travels in customData (docs: why not Key Vault). Azure
    serves customData neither from IMDS nor from a GET of the VM (unlike userData); on the node,
    where cloud-init saves it, nothing readable by a user may hold it. The needle is the key as
    the user-data carries it (base64); root finds it in cloud-init's copy, so the search can
    succeed, and an unprivileged user must find it nowhere."""
    specs, workdir, _ = booted
    for spec in specs:
        node = spec.name
        needle = boot.run(
            workdir, node, ["sh", "-c", "head -c 30 /etc/munge/munge.key | base64 -w0"]
        )
        assert len(needle.stdout) == 40, needle
        where = "/var/lib/cloud /var/lib/waagent /run /etc /var/log /var/tmp /tmp /home /sched /opt"
        as_root = boot.run(
            workdir, node, ["sh", "-c", f"grep -rlF {needle.stdout} {where} 2>/dev/null"]
        )
        assert "/user-data.txt" in as_root.stdout, as_root  # instances/<id>/, cloud-init's copy
        boot.run(workdir, node, ["useradd", "-m", "gpucl-eve"])
        search = f"grep -rlF {needle.stdout} {where} 2>/dev/null; cat /etc/munge/munge.key"
        as_user = boot.run(workdir, node, ["runuser", "-u", "gpucl-eve", "--", "sh", "-c", search])
        assert as_user.stdout.strip() == "", f"{node}: a user reads the key in {as_user.stdout!r}"
        assert "Permission denied" in as_user.stderr, as_user.stderr


PROM = "http://127.0.0.1:9090/api/v1"
HEALTH = "/usr/local/libexec/gpu-clusters/gpucl-health.sh"
NO_SERIES_HERE = {"InfiniBand port state", "InfiniBand traffic by node"}
"""Panels with no source in the sandbox (substitution "infiniband-counters"): their queries are
still run and must be valid; they must return nothing, so this list cannot go stale."""


def _prom(workdir, node: str, path: str, query: str | None = None, api: str = PROM) -> dict:
    cmd = ["curl", "-sS", "--max-time", "20", "--get", f"{api}/{path}"]
    if query is not None:
        cmd[4:4] = ["--data-urlencode", f"query={query}"]
    out = boot.run(workdir, node, cmd, timeout=40)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "success", data
    return data["data"]


def _until(what: str, check, timeout: float = 150.0, every: float = 5.0, detail=lambda: ""):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"not within {timeout:.0f} s: {what}\n{detail()}"
        time.sleep(every)


def _metrics_now(workdir, node: str) -> None:
    ran = boot.run(workdir, node, ["systemctl", "start", "gpucl-slurm-metrics.service"])
    assert ran.returncode == 0, ran.stderr


def test_prometheus_scrapes_every_exporter_answers_every_panel_and_fires_the_drain_alert(booted):
    """The scheduler's Prometheus (Debian's package, the user-data's config) scrapes
    node_exporter on both nodes, the DCGM exporter (declared stand-in) on the GPU node and the
    Slurm exporter's textfile, after the reboot above; promtool accepts the rules, the config and
    the exporter's output; every dashboard panel's query returns series (IB: declared none); a
    failed health check's drain fires NodeDrained naming node and reason, and the alert ends
    when the check passes again. The API listens on the scheduler's localhost only."""
    specs, workdir, _ = booted
    scheduler, gpu = specs[0].name, specs[1].name
    for check in (
        ["promtool", "check", "rules", "/etc/gpu-clusters/prometheus/gpucl.rules.yml"],
        ["promtool", "check", "config", "/etc/gpu-clusters/prometheus/prometheus.yml"],
    ):
        got = boot.run(workdir, scheduler, check)
        assert got.returncode == 0, got.stdout + got.stderr
    _metrics_now(workdir, scheduler)
    textfile = "/var/lib/prometheus/node-exporter/gpucl-slurm.prom"
    got = boot.run(workdir, scheduler, ["sh", "-c", f"promtool check metrics < {textfile}"])
    assert got.returncode == 0, got.stdout + got.stderr

    def all_up():
        active = _prom(workdir, scheduler, "targets")["activeTargets"]
        up = {(t["labels"]["job"], t["labels"]["node"]) for t in active if t["health"] == "up"}
        want = {("node", "h100-scheduler"), ("node", "gpu-pg0-1"), ("dcgm", "gpu-pg0-1")}
        return want <= up

    _until("node_exporter on both nodes and the DCGM exporter up", all_up)
    # rates need two samples of each counter in their window
    _until(
        "two scrapes of the DCGM counters",
        lambda: _prom(workdir, scheduler, "query", "count_over_time(up{job='dcgm'}[5m]) >= 2")[
            "result"
        ],
    )
    # the API is not on the network: a GPU node cannot reach it
    far = boot.run(
        workdir, gpu, ["curl", "-sS", "--max-time", "5", "http://h100-scheduler:9090/-/ready"]
    )
    assert far.returncode != 0, far.stdout

    def drained_alert():
        alerts = _prom(workdir, scheduler, "alerts")["alerts"]
        return [
            a
            for a in alerts
            if a["labels"]["alertname"] == "NodeDrained" and a["labels"].get("node") == "gpu-pg0-1"
        ]

    assert drained_alert() == []
    faults.inject(workdir, gpu, "fail-health")
    try:
        boot.run(workdir, gpu, ["env", "SLURMD_NODENAME=gpu-pg0-1", HEALTH])
        _metrics_now(workdir, scheduler)
        firing = _until(
            "NodeDrained firing for gpu-pg0-1",
            lambda: [a for a in drained_alert() if a["state"] == "firing"],
            detail=lambda: (
                boot.run(workdir, scheduler, ["cat", textfile]).stdout
                + json.dumps(_prom(workdir, scheduler, "alerts"))
                + json.dumps(_prom(workdir, scheduler, "query", "gpucl_slurm_node_drained"))
            ),
        )
        labels = firing[0]["labels"]
        assert labels["owner"] == "health" and labels["reason"].startswith("gpucl"), labels
        # every panel, with a drain to show too
        panels = []
        for path in sorted((ROOT / "templates" / "monitoring" / "dashboards").glob("*.json")):
            panels += json.loads(path.read_text())["panels"]
        assert len(panels) >= 15
        empty = {}
        for panel in panels:
            for target in panel["targets"]:
                result = _prom(workdir, scheduler, "query", target["expr"])["result"]
                if not result:
                    empty[panel["title"]] = target["expr"]
        assert set(empty) == NO_SERIES_HERE, empty
    finally:
        faults.clear(workdir, gpu)
    boot.run(workdir, gpu, ["env", "SLURMD_NODENAME=gpu-pg0-1", HEALTH])
    _metrics_now(workdir, scheduler)
    _until("NodeDrained resolved for gpu-pg0-1", lambda: drained_alert() == [])


K8S_DIR = "/var/lib/gpucl-k8s-prometheus"
K8S_API_PORT = 16443
K8S_PROM_PORT = 9091
K8S_REASON = "gpucl-nccl: busbw 12.0 GB/s below 40.0"
NODE_CORDONED_TEST = """
rule_files: [alerting_rules.yml]
evaluation_interval: 30s
tests:
  - interval: 30s
    input_series:
      - series: kube_node_spec_unschedulable{node="gpu-a"}
        values: 1x20
      - series: 'kube_node_annotations{node="gpu-a",
          annotation_gpu_clusters_nccl_suspect_reason="REASON"}'
        values: 1x20
      - series: kube_node_spec_unschedulable{node="gpu-b"}
        values: 1x20
      - series: kube_node_spec_unschedulable{node="gpu-c"}
        values: 0x20
      - series: DCGM_FI_DEV_XID_ERRORS{node="gpu-a",gpu="3"}
        values: 0 0 79x18
    alert_rule_test:
      - eval_time: 6m
        alertname: NodeCordoned
        exp_alerts:
          - exp_labels:
              severity: warning
              node: gpu-a
              annotation_gpu_clusters_nccl_suspect_reason: REASON
            exp_annotations:
              summary: "gpu-a is cordoned by clusterctl validate: REASON"
              description: CORDON_DESCRIPTION
          - exp_labels: {severity: warning, node: gpu-b}
            exp_annotations:
              summary: "gpu-b is cordoned"
              description: CORDON_DESCRIPTION
      - eval_time: 2m
        alertname: GpuXidError
        exp_alerts:
          - exp_labels: {severity: critical, node: gpu-a, gpu: "3"}
            exp_annotations:
              summary: "gpu-a GPU 3 reported XID 79"
              description: XID_DESCRIPTION
"""


def _put(workdir, node: str, path: str, text: str) -> None:
    data = base64.b64encode(text.encode()).decode()
    got = boot.run(workdir, node, ["sh", "-c", f"echo {data} | base64 -d > {path}"])
    assert got.returncode == 0, got.stderr


# The GPU Operator's DCGM exporter Service as the operator makes it (NVIDIA/gpu-operator v26.7.0
# assets/state-dcgm-exporter/0400_service.yaml): note the scrape annotation.
DCGM_SERVICE = {
    "metadata": {
        "name": "nvidia-dcgm-exporter",
        "namespace": "gpu-operator",
        "labels": {"app": "nvidia-dcgm-exporter"},
        "annotations": {"prometheus.io/scrape": "true"},
    },
    "spec": {"ports": [{"name": "gpu-metrics", "port": 9400, "targetPort": 9400}]},
}


def _k8s_objects(chart: list[dict], nodes: dict, gpu: str, scheduler: str) -> dict:
    """What the API server would list: the GPU Operator's DCGM exporter Service and its pod on
    the GPU node, the chart's own node_exporter Service (as rendered) with a pod on both nodes,
    and its kube-state-metrics Service, whose pod is this stand-in, with the GPU node cordoned
    by validate. EndpointSlices and pods as the control plane would make them."""
    services, slices, pods = [], [], []

    def service(svc: dict, eps: list[tuple[str, str]], port: int | None = None) -> None:
        meta = {**svc["metadata"], "resourceVersion": "1"}
        services.append({"metadata": meta, "spec": svc["spec"]})
        name, ns = meta["name"], meta["namespace"]
        (svc_port,) = svc["spec"]["ports"]
        number = port or svc_port.get("targetPort", svc_port["port"])
        endpoints = []
        for i, (node, ip) in enumerate(eps):
            pod = f"{name}-{i}"
            pods.append({"metadata": {"name": pod, "namespace": ns, "labels": meta["labels"],
                                      "resourceVersion": "1"},
                         "spec": {"nodeName": node, "containers": [{"name": name}]},
                         "status": {"podIP": ip, "phase": "Running"}})  # fmt: skip
            ref = {"kind": "Pod", "name": pod, "namespace": ns}
            endpoints.append({"addresses": [ip], "conditions": {"ready": True}, "nodeName": node,
                              "targetRef": ref})  # fmt: skip
        slices.append({"metadata": {"name": f"{name}-x", "namespace": ns, "resourceVersion": "1",
                                    "labels": {"kubernetes.io/service-name": name}},
                       "addressType": "IPv4", "endpoints": endpoints,
                       "ports": [{"name": svc_port["name"], "port": number,
                                  "protocol": "TCP"}]})  # fmt: skip

    def rendered_service(name: str) -> dict:
        (svc,) = [d for d in chart if d["kind"] == "Service" and d["metadata"]["name"] == name]
        return svc

    at = {name: nodes[name]["address"] for name in (gpu, scheduler)}
    service(DCGM_SERVICE, [(gpu, at[gpu])])
    service(rendered_service("prometheus-prometheus-node-exporter"),
            [(gpu, at[gpu]), (scheduler, at[scheduler])])  # fmt: skip
    service(rendered_service("prometheus-kube-state-metrics"), [(scheduler, "127.0.0.1")],
            port=K8S_API_PORT)  # fmt: skip
    ksm = (
        f'kube_node_spec_unschedulable{{node="{gpu}"}} 1\n'
        f'kube_node_annotations{{node="{gpu}",'
        f'annotation_gpu_clusters_nccl_suspect_reason="{K8S_REASON}"}} 1\n'
    )
    return {"services": services, "endpointslices": slices, "pods": pods, "ksmMetrics": ksm}


def test_the_kubernetes_prometheus_finds_the_dcgm_exporter_by_its_service(booted):
    """Monitoring on Kubernetes: the Prometheus config and rules the pinned chart renders for
    aks-h100 (helm template with our values), run by a real Prometheus on the scheduler, find the
    GPU Operator's DCGM exporter, node_exporter and kube-state-metrics through Kubernetes service
    discovery, each target named by its node and scraped once; every GPU dashboard panel answers
    (IB: declared none); NodeCordoned is pending with validate's reason; promtool accepts the
    config and the rules, and `promtool test rules` fires NodeCordoned (with and without a
    reason) and GpuXidError as written. Substitutions (test-side): the API server is
    fake_kube_api.py (real object shapes, list and watch) reached by `api_server` added to each
    kubernetes_sd_config; the exporters are the sandbox's (DCGM: declared stand-in); Prometheus is
    the sandbox's Debian 2.53.3, not the chart's v3.14.0 image."""
    from tests.unit.render.test_helm_rendered_crds import rendered

    specs, workdir, _ = booted
    scheduler, gpu = specs[0].name, specs[1].name
    nodes = vmstate.load(workdir).nodes
    _, releases = rendered("aks-h100", ())
    docs = releases["prometheus"]
    (cm,) = [
        d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "prometheus-server"
    ]
    (dep,) = [
        d
        for d in docs
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "prometheus-server"
    ]
    (server,) = [
        c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == "prometheus-server"
    ]
    api = f"http://127.0.0.1:{K8S_API_PORT}"
    config = yaml.safe_load(cm["data"]["prometheus.yml"])
    for job in config["scrape_configs"]:
        for sd in job.get("kubernetes_sd_configs", []):
            sd["api_server"] = api
    config["rule_files"] = [f"{K8S_DIR}/{Path(p).name}" for p in config["rule_files"]]
    args = [
        a for a in server["args"] if not a.startswith(("--config.file=", "--storage.tsdb.path="))
    ]
    args += [f"--config.file={K8S_DIR}/prometheus.yml", f"--storage.tsdb.path={K8S_DIR}/data",
             f"--web.listen-address=127.0.0.1:{K8S_PROM_PORT}"]  # fmt: skip
    sa = "/run/secrets/kubernetes.io/serviceaccount"  # in a pod, its service account's
    ran = boot.run(
        workdir,
        scheduler,
        [
            "sh",
            "-c",
            f"mkdir -p {K8S_DIR} {sa} && echo sandbox > {sa}/token"
            f" && cp /etc/ssl/certs/ca-certificates.crt {sa}/ca.crt",
        ],
    )
    assert ran.returncode == 0, ran.stderr
    for name, text in cm["data"].items():
        _put(workdir, scheduler, f"{K8S_DIR}/{name}", text)
    _put(workdir, scheduler, f"{K8S_DIR}/prometheus.yml", yaml.safe_dump(config))
    _put(
        workdir,
        scheduler,
        f"{K8S_DIR}/fake_kube_api.py",
        (ROOT / "tests/e2e/vm/fake_kube_api.py").read_text(),
    )
    objects = _k8s_objects(docs, nodes, gpu, scheduler)
    _put(workdir, scheduler, f"{K8S_DIR}/objects.json", json.dumps(objects))
    rules_text = cm["data"]["alerting_rules.yml"]
    rules = yaml.safe_load(rules_text)["groups"][0]["rules"]
    desc = {r["alert"]: r["annotations"].get("description", "") for r in rules}
    rule_test = NODE_CORDONED_TEST.replace(
        "CORDON_DESCRIPTION", json.dumps(desc["NodeCordoned"])
    ).replace("XID_DESCRIPTION", json.dumps(desc["GpuXidError"]))
    _put(workdir, scheduler, f"{K8S_DIR}/rules_test.yml", rule_test)
    for check in (
        ["promtool", "check", "config", f"{K8S_DIR}/prometheus.yml"],
        ["promtool", "check", "rules", f"{K8S_DIR}/alerting_rules.yml"],
        ["sh", "-c", f"cd {K8S_DIR} && promtool test rules rules_test.yml"],
    ):
        got = boot.run(workdir, scheduler, check)
        assert got.returncode == 0, f"{check}\n{got.stdout}{got.stderr}"

    def start(cmd: str, log: str) -> str:
        got = boot.run(
            workdir,
            scheduler,
            ["sh", "-c", f"setsid nohup {cmd} > {K8S_DIR}/{log} 2>&1 < /dev/null & echo $!"],
        )
        assert got.returncode == 0, got.stderr
        return got.stdout.strip()

    pids = [
        start(
            f"python3 {K8S_DIR}/fake_kube_api.py {K8S_API_PORT} {K8S_DIR}/objects.json"
            f" {K8S_DIR}/requests.log",
            "api.log",
        )
    ]
    try:
        pids.append(start("/usr/bin/prometheus " + " ".join(args), "prometheus.log"))
        base = f"http://127.0.0.1:{K8S_PROM_PORT}/api/v1"

        def prom(path: str, query: str | None = None) -> dict:
            return _prom(workdir, scheduler, path, query, api=base)

        def logs() -> str:
            return boot.run(
                workdir,
                scheduler,
                [
                    "sh",
                    "-c",
                    f"tail -n 30 {K8S_DIR}/prometheus.log {K8S_DIR}/api.log {K8S_DIR}/requests.log",
                ],
            ).stdout

        ready = ["curl", "-sf", "--max-time", "5", f"http://127.0.0.1:{K8S_PROM_PORT}/-/ready"]
        _until(
            "Prometheus ready",
            lambda: boot.run(workdir, scheduler, ready).returncode == 0,
            timeout=60,
            every=2,
            detail=logs,
        )
        want = {
            ("dcgm", gpu),
            ("node", gpu),
            ("node", scheduler),
            ("kube-state-metrics", scheduler),
        }

        def all_up():
            active = prom("targets")["activeTargets"]
            return {
                (t["labels"]["job"], t["labels"].get("node")) for t in active if t["health"] == "up"
            } >= want

        _until(
            "the DCGM exporter, node_exporters and kube-state-metrics discovered and up",
            all_up,
            detail=logs,
        )
        active = prom("targets")["activeTargets"]
        dcgm = [t for t in active if t["scrapeUrl"].endswith(":9400/metrics")]
        assert [t["labels"]["job"] for t in dcgm] == ["dcgm"], dcgm
        urls = sorted(t["scrapeUrl"] for t in active)
        assert len(urls) == len(set(urls)), urls  # each exporter scraped once
        _until("two scrapes of the DCGM counters",
               lambda: prom("query", "count_over_time(up{job='dcgm'}[5m]) >= 2")
               ["result"])  # fmt: skip
        panels = json.loads((ROOT / "templates/monitoring/dashboards/gpucl-gpus.json").read_text())[
            "panels"
        ]
        empty = {
            p["title"]
            for p in panels
            for t in p["targets"]
            if not prom("query", t["expr"])["result"]
        }
        assert empty == NO_SERIES_HERE, empty
        gpu_util = prom("query", "avg by (node) (DCGM_FI_DEV_GPU_UTIL)")["result"]
        assert [r["metric"] for r in gpu_util] == [{"node": gpu}], gpu_util

        def cordoned():
            alerts = prom("alerts")["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "NodeCordoned"]

        (alert,) = _until("NodeCordoned pending for the cordoned node", cordoned, detail=logs)
        assert alert["labels"]["node"] == gpu, alert
        assert (
            alert["annotations"]["summary"]
            == f"{gpu} is cordoned by clusterctl validate: {K8S_REASON}"
        )
    finally:
        boot.run(workdir, scheduler, ["kill", *pids])
        boot.run(workdir, scheduler, ["rm", "-rf", K8S_DIR, sa])


def test_the_sandbox_weighs_in_the_cpu_scheduler_as_the_process_that_booted_it(booted):
    """This module runs at the e2e suite's nice (tests/conftest.py E2E_NICE): its nodes' cgroup
    gets that weight, so the soak's nodes (nice 0) come first on the CPU."""
    from clusterctl.sandbox.cgroups import cpu_shares, v1_hierarchies
    from tests.conftest import E2E_NICE

    _, workdir, _ = booted
    (cpu,) = [h for h in v1_hierarchies() if "cpu" in h.name.split(",")]
    shares = (cpu / f"gpucl-{vmstate.sandbox_id(workdir)}" / "cpu.shares").read_text()
    assert int(shares) == cpu_shares(E2E_NICE) == 110, shares
