"""Slurm's power saving drives the GPU nodes (slurm.conf), configless nodes, the power
program installed on the scheduler, and a resize that leaves the nodes' user-data alone."""

from __future__ import annotations

import base64
import gzip
import json
import re

import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import render_slurm
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec


def conf(*overrides: str) -> dict[str, list[str]]:
    spec, _ = load_stack_spec("azure-h100", list(overrides))
    text = render_slurm(spec, cloud_site(spec), "azure-h100")["slurm.conf"]
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


def test_idle_nodes_are_suspended_after_the_default_idle_time() -> None:
    c = conf()
    assert c["SuspendTime"] == ["900"]  # 15 minutes, never INFINITE by default
    assert c["ResumeTimeout"] == ["1800"] and c["SuspendTimeout"] == ["600"]
    assert c["ResumeProgram"] == ["/usr/local/libexec/gpu-clusters/resume.sh"]
    assert c["SuspendProgram"] == ["/usr/local/libexec/gpu-clusters/suspend.sh"]
    assert c["ResumeFailProgram"] == ["/usr/local/libexec/gpu-clusters/resume-fail.sh"]
    assert "SuspendExcNodes" not in c
    (part,) = c["PartitionName"]
    assert part.endswith(" SuspendTime=900")
    assert all("State=CLOUD" in n for n in c["NodeName"])


def test_idle_minutes_zero_never_suspends_and_min_nodes_stay_up() -> None:
    c = conf("partitions[0].idleMinutes=0")
    assert c["SuspendTime"] == ["INFINITE"]
    assert c["PartitionName"][0].endswith(" SuspendTime=INFINITE")
    c = conf("partitions[0].nodes=150", "partitions[0].minNodes=101", "partitions[0].idleMinutes=5")
    assert c["SuspendTime"] == ["300"]
    assert c["SuspendExcNodes"] == ["gpu-pg0-[1-100],gpu-pg1-1"]


def test_configless_controller_that_keeps_drains_through_a_suspend() -> None:
    """idle_on_node_suspend clears DRAIN and FAIL when Slurm suspends a node (power_save.c), so an
    admin's drain was gone at POWERING_DOWN: it must not be set."""
    c = conf()
    assert c["SlurmctldParameters"][0].split(",")[0] == "enable_configless"
    assert not any("idle_on_node_suspend" in v for vs in c.values() for v in vs)


def test_jobs_get_unlimited_locked_memory_and_one_fabric() -> None:
    c = conf()
    assert c["PropagateResourceLimitsExcept"] == ["MEMLOCK"]
    assert c["TopologyPlugin"] == ["topology/tree"]
    spec, _ = load_stack_spec("azure-h100", ["partitions[0].nodes=150"])
    topo = render_slurm(spec, cloud_site(spec), "azure-h100")["topology.conf"]
    switches = [line for line in topo.splitlines() if line.startswith("SwitchName=")]
    # one leaf per scale set, and no switch above them: Slurm then never spans two fabrics
    assert len(switches) == 2 and all(" Nodes=" in s for s in switches), topo
    assert "Switches=" not in topo


def test_slurmctld_state_lives_on_the_protected_data_disk() -> None:
    c = conf()
    assert c["StateSaveLocation"] == ["/shared/spool/slurmctld"]
    spec, _ = load_stack_spec("azure-h100", [])
    ud = yaml.safe_load(render_cloud_init(spec, "azure-h100", munge_key_b64=MUNGE_PLACEHOLDER))
    assert ["LABEL=gpucl-shared", "/shared", "xfs", "defaults,nofail", "0", "2"] in ud["mounts"]
    dropin = _write_files(render_cloud_init(spec, "azure-h100", munge_key_b64=MUNGE_PLACEHOLDER))[
        "/etc/systemd/system/slurmctld.service.d/50-gpu-clusters.conf"
    ]
    assert "RequiresMountsFor=/shared/spool/slurmctld" in dropin["content"]


def _write_files(user_data: str) -> dict[str, dict]:
    return {f["path"]: f for f in yaml.safe_load(user_data)["write_files"]}


def _text(entry: dict) -> str:
    if entry.get("encoding") == "gz+b64":
        return gzip.decompress(base64.b64decode(entry["content"])).decode()
    return entry["content"]


def test_gpu_nodes_fetch_their_config_and_resize_leaves_their_user_data_alone() -> None:
    texts = []
    for nodes in (2, 3):
        spec, _ = load_stack_spec("azure-h100", [f"partitions[0].nodes={nodes}"])
        ud = render_cloud_init(
            spec, "azure-h100", munge_key_b64=MUNGE_PLACEHOLDER, partition=spec.partitions[0]
        )
        files = _write_files(ud)
        assert "/etc/slurm/slurm.conf" not in files
        setup = _text(files["/usr/local/libexec/gpu-clusters/gpu-node-setup.sh"])
        assert '"SLURMD_OPTIONS=-N $node --conf-server h100-scheduler:6817"' in setup
        texts.append(ud)
    assert texts[0] == texts[1]


def test_config_sync_script_carries_the_node_count_dependent_files() -> None:
    from clusterctl.render.slurm_conf import render_config_sync

    spec, _ = load_stack_spec("azure-h100", ["partitions[0].nodes=3"])
    script = render_config_sync(spec, "azure-h100")
    blobs = re.findall(r"^put (\S+) <<'B64'\n(.*?)\nB64$", script, re.S | re.M)
    files = {path: base64.b64decode(b.replace("\n", "")).decode() for path, b in blobs}
    assert sorted(files) == [
        "/etc/nfs.conf.d/50-gpu-clusters.conf",
        "/etc/slurm/gres.conf",
        "/etc/slurm/slurm.conf",
        "/etc/slurm/topology.conf",
    ]
    assert "NodeName=gpu-pg0-[1-3]" in files["/etc/slurm/slurm.conf"]
    assert script.rstrip().endswith("fi") and "scontrol reconfigure" in script


def test_scheduler_installs_the_power_program_with_pinned_sdks() -> None:
    spec, _ = load_stack_spec("azure-h100", [])
    ud = render_cloud_init(spec, "azure-h100", munge_key_b64=MUNGE_PLACEHOLDER, db_password="x")
    files = _write_files(ud)
    for module in ("program.py", "azure_backend.py", "names.py", "backend.py", "__main__.py"):
        assert f"/opt/gpucl/lib/gpucl_power/{module}" in files
    cfg = json.loads(files["/etc/gpu-clusters/power.json"]["content"])
    assert cfg["cluster"] == "h100" and cfg["reasonPrefix"] == "gpucl:"
    wrapper = files["/usr/local/bin/gpucl-power"]["content"]
    assert "/opt/gpucl/venv/bin/python -m gpucl_power" in wrapper
    resume = files["/usr/local/libexec/gpu-clusters/resume.sh"]["content"]
    assert 'exec /usr/local/bin/gpucl-power resume "$1"' in resume
    runcmd = " ".join(str(c) for c in yaml.safe_load(ud)["runcmd"])
    assert re.search(
        r"pip install .*azure-identity==\d+\.\d+\.\d+ azure-mgmt-compute==\d+.* && "
        r"touch /opt/gpucl/venv/\.gpucl-ready",
        runcmd,
    )


def test_the_power_program_waits_for_its_venv_which_is_built_after_slurmctld(tmp_path) -> None:
    """slurmctld starts (and the nodes' slurmd get their configless config) before the venv is
    built; a resume or suspend called meanwhile waits for the venv's ready mark, then runs."""
    import subprocess
    import time

    spec, _ = load_stack_spec("azure-h100", [])
    ud = render_cloud_init(spec, "azure-h100", munge_key_b64=MUNGE_PLACEHOLDER, db_password="x")
    runcmd = " ".join(str(c) for c in yaml.safe_load(ud)["runcmd"])
    assert runcmd.index("restart', 'slurmctld") < runcmd.index("/opt/gpucl/venv/bin/pip")
    wrapper = _write_files(ud)["/usr/local/bin/gpucl-power"]["content"]
    home = tmp_path / "gpucl"
    (home / "venv" / "bin").mkdir(parents=True)
    python = home / "venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/ran\n')
    python.chmod(0o755)
    script = tmp_path / "gpucl-power"
    script.write_text(wrapper.replace("/opt/gpucl", str(home)))
    script.chmod(0o755)
    proc = subprocess.Popen([str(script), "resume", "gpu-pg0-1"])
    try:
        time.sleep(1.5)
        assert proc.poll() is None and not (tmp_path / "ran").exists()
        (home / "venv" / ".gpucl-ready").touch()
        assert proc.wait(timeout=5) == 0
        ran = (tmp_path / "ran").read_text().split()
        assert ran == ["-m", "gpucl_power", "resume", "gpu-pg0-1"]
    finally:
        proc.kill()


def test_each_vm_gets_every_power_module_its_entry_point_imports() -> None:
    import ast
    from pathlib import Path

    from clusterctl.render.power_files import POWER_NODE_MODULES, POWER_SCHEDULER_MODULES

    root = Path(__file__).resolve().parents[3] / "clusterctl" / "power"
    for shipped in (POWER_SCHEDULER_MODULES, POWER_NODE_MODULES):
        for name in shipped:
            tree = ast.parse((root / name).read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    wanted = [f"{node.module}.py"] if node.module else []
                    wanted += [f"{a.name}.py" for a in node.names if not node.module]
                    for module in wanted:
                        assert module in shipped, f"{name} imports {module}, not shipped"


def test_config_sync_retries_a_reconfigure_that_times_out(tmp_path) -> None:
    """slurmctld may time out on a reconfigure while busy: the Run Command tries again (5 times,
    10 s apart) instead of failing the resize on the first "Socket timed out"."""
    import subprocess

    from clusterctl.render.slurm_conf import render_config_sync

    spec, _ = load_stack_spec("azure-h100", ["partitions[0].nodes=3"])
    script = (
        render_config_sync(spec, "azure-h100")
        .replace("/etc/slurm/", f"{tmp_path}/etc/")
        .replace("/etc/nfs.conf.d/", f"{tmp_path}/etc/")
    )
    bins = tmp_path / "bin"
    bins.mkdir()
    stubs = {
        "cloud-init": "exit 0",
        "systemctl": "exit 0",  # is-active: slurmctld runs
        "sleep": f'echo "$@" >> {tmp_path}/sleeps',
        "install": 'mkdir -p "$(dirname "${@: -1}")" && cp "${@: -2:1}" "${@: -1}"',
        "sinfo": "printf 'gpu-pg0-1\\ngpu-pg0-2\\ngpu-pg0-3\\n'",
        # times out twice, then succeeds
        "scontrol": 'if [ "$1" = show ]; then sinfo; exit 0; fi\n'
        f"n=$(cat {tmp_path}/n 2>/dev/null || echo 0); echo $((n+1)) > {tmp_path}/n\n"
        '[ "$n" -ge 2 ] || { echo "slurm_reconfigure error: Socket timed out on send/recv '
        'operation" >&2; exit 1; }',
    }
    for name, body in stubs.items():
        (bins / name).write_text(f"#!/bin/bash\n{body}\n")
        (bins / name).chmod(0o755)
    env = {"PATH": f"{bins}:/usr/bin:/bin"}
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "scontrol reconfigure done" in proc.stdout
    assert (tmp_path / "n").read_text().strip() == "3"
    assert (tmp_path / "sleeps").read_text().split() == ["10", "10"]


def test_the_scratch_is_not_under_a_mount_point_azure_mounts_later() -> None:
    """cloud-init mounts Azure's resource disk (ephemeral0) at /mnt after the network is up
    (cc_mounts.py), later than gpucl-scratch.service: a scratch under /mnt (the old /mnt/nvme)
    was hidden by it after a power cycle, and pyxis's required runtime with it."""
    spec, _ = load_stack_spec("azure-a100", [])
    ud = render_cloud_init(
        spec, "azure-a100", munge_key_b64=MUNGE_PLACEHOLDER, partition=spec.partitions[0]
    )
    scratch = _text(_write_files(ud)["/usr/local/libexec/gpu-clusters/gpucl-scratch.sh"])
    (mount_point,) = re.findall(r"^mount_point=(\S+)$", scratch, re.M)
    assert mount_point == "/nvme"
    assert not (mount_point + "/").startswith("/mnt/")


def test_slurmctld_starts_a_power_program_at_most_every_thirty_seconds() -> None:
    """Each program sends one call per scale set and Azure refills a scale set's action bucket
    at a few a minute: with programs every 1-10 s, suspend waves were half throttled
    (benchmarks/power_scale.py). A SlurmctldParameters option (SchedMD power_save.c)."""
    (params,) = conf()["SlurmctldParameters"]
    assert "power_save_min_interval=30" in params.split(",")
    assert "SchedulerParameters" not in conf()


def test_tree_width_is_slurms_default() -> None:
    assert "TreeWidth" not in conf()


def test_a_job_larger_than_one_scale_set_is_refused_at_submission() -> None:
    """MaxNodes is the largest scale set of the partition (one InfiniBand fabric, no switch
    joining two), and EnforcePartLimits refuses a larger job at sbatch instead of letting it pend
    for ever."""
    c = conf("partitions[0].nodes=250")
    assert c["EnforcePartLimits"] == ["ANY"]
    (part,) = c["PartitionName"]
    assert " MaxNodes=100 " in part
    c = conf("partitions[0].nodes=120", "partitions[0].maxNodesPerScaleSet=40")
    assert " MaxNodes=40 " in c["PartitionName"][0]
    assert " MaxNodes=2 " in conf()["PartitionName"][0]


def test_the_power_program_ends_each_run_a_minute_before_slurms_timeouts() -> None:
    from clusterctl.render.power_files import power_config

    spec, _ = load_stack_spec("azure-h100", [])
    doc = json.loads(power_config(spec, catalog()))
    c = conf()
    assert doc["resumeDeadlineSeconds"] == int(c["ResumeTimeout"][0]) - 60
    assert doc["suspendDeadlineSeconds"] == int(c["SuspendTimeout"][0]) - 60


def test_the_power_program_prices_each_scale_set_and_reports_down_billing_to_prometheus() -> None:
    """power.json gives `return` each scale set's price and where to write the DOWN nodes whose
    VM bills; the return unit puts that textfile where node_exporter reads, and the alert reads
    the series the power program writes."""
    from clusterctl.power.down_billing import CHECKED_METRIC, METRIC
    from clusterctl.render.monitoring import render_alert_rules, scheduler_monitoring
    from clusterctl.render.power_files import power_config

    spec, _ = load_stack_spec("azure-h100", [])
    doc = json.loads(power_config(spec, catalog()))
    price = catalog().require(spec.partitions[0].sku).price.usd_per_hour
    assert doc["pricesUsdPerHour"] == {f"{spec.name}-gpu-pg0": price}
    assert doc["downBillingRecord"] is True
    mon = scheduler_monitoring(spec, "azure-h100", catalog())
    assert doc["textfile"] == mon["down_billing_from"]
    assert str(mon["down_billing_to"]).startswith("/var/lib/prometheus/node-exporter/")
    rules = yaml.safe_load(render_alert_rules(spec, "azure-h100"))["groups"][0]["rules"]
    exprs = {r["alert"]: r["expr"] for r in rules}
    assert METRIC in exprs["NodeDownVmRunning"] and CHECKED_METRIC in exprs["DownBillingCheckStale"]
