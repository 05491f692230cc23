"""A shrink drains the nodes that leave and waits until they are idle before anything changes.

The rendered config-sync script runs under bash with stub Slurm commands on PATH that log, in one
file, what was called in which order.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from clusterctl.render.slurm_conf import render_config_sync
from clusterctl.spec.load import load_stack_spec

KNOWN = [f"gpu-pg0-{i}" for i in range(1, 6)]  # what slurmctld has before the shrink to 3


def run_sync(
    tmp_path: Path,
    *,
    busy_polls: int,
    drain_only: bool = False,
    wait: int = 2700,
    delete_fails: bool = False,
):
    spec, _ = load_stack_spec("azure-h100", ["partitions[0].nodes=3"])
    bins = tmp_path / "bin"
    script = (
        render_config_sync(spec, "azure-h100", drain_only=drain_only, drain_wait_seconds=wait)
        .replace("/etc/slurm/", f"{tmp_path}/etc/")
        .replace("/etc/nfs.conf.d/", f"{tmp_path}/etc/")
        .replace("/usr/local/bin/gpucl-power", f"{bins}/gpucl-power")
    )
    log = tmp_path / "events"
    bins.mkdir()
    known = "\\n".join(KNOWN)
    stubs = {
        "cloud-init": "exit 0",
        "systemctl": "exit 0",  # is-active: slurmctld runs
        "gpucl-power": f'echo "gpucl-power $*" >> {log}; exit {int(delete_fails)}',
        "sleep": f'echo "sleep $*" >> {log}',
        "install": f'echo "install ${{@: -1}}" >> {log}; mkdir -p "$(dirname "${{@: -1}}")" '
        '&& cp "${@: -2:1}" "${@: -1}"',
        "sinfo": f"printf '{known}\\n'",
        "scontrol": 'if [ "$1 $2" = "show hostnames" ]; then '
        "printf 'gpu-pg0-1\\ngpu-pg0-2\\ngpu-pg0-3\\n'; exit 0; fi\n"
        f'echo "scontrol $*" >> {log}',
        # a job runs on gpu-pg0-5 for `busy_polls` polls, then it is done
        "squeue": f"n=$(grep -c '^squeue' {log} || true); echo \"squeue $*\" >> {log}\n"
        f'[ "$n" -lt {busy_polls} ] && echo 42; exit 0',
    }
    for name, body in stubs.items():
        (bins / name).write_text(f"#!/bin/bash\n{body}\n")
        (bins / name).chmod(0o755)
    env = {"PATH": f"{bins}:/usr/bin:/bin"}
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    return proc, log.read_text().splitlines() if log.exists() else []


def test_nodes_that_leave_are_drained_and_idle_before_any_file_changes(tmp_path) -> None:
    proc, events = run_sync(tmp_path, busy_polls=2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    drain = (
        "scontrol update NodeName=gpu-pg0-4,gpu-pg0-5 State=DRAIN "
        "Reason=gpucl: resize: removed from the stack"
    )
    assert events[0] == drain
    assert events[1:6] == [
        "squeue -h -w gpu-pg0-4,gpu-pg0-5 -o %i",
        "sleep 60",
        "squeue -h -w gpu-pg0-4,gpu-pg0-5 -o %i",
        "sleep 60",
        "squeue -h -w gpu-pg0-4,gpu-pg0-5 -o %i",
    ]
    assert [e.split()[0] for e in events[6:]] == ["install"] * 4 + ["scontrol"] * 2
    assert events[-2:] == ["scontrol show config", "scontrol reconfigure"]
    assert "waiting for job(s) 42 on leaving nodes (60s of 2700s)" in proc.stdout
    assert "leaving nodes drained and idle: gpu-pg0-4,gpu-pg0-5" in proc.stdout


def test_jobs_that_outlast_the_wait_stop_the_resize_with_nothing_changed(tmp_path) -> None:
    proc, events = run_sync(tmp_path, busy_polls=99, wait=120)
    assert proc.returncode == 1
    assert not any(e.startswith("install") or e == "scontrol reconfigure" for e in events)
    assert events.count("squeue -h -w gpu-pg0-4,gpu-pg0-5 -o %i") == 3
    assert "job(s) 42 still run on gpu-pg0-4,gpu-pg0-5 after 120s" in proc.stderr


def test_the_drain_only_copy_drains_and_writes_nothing(tmp_path) -> None:
    proc, events = run_sync(tmp_path, busy_polls=0, drain_only=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert events[0].startswith("scontrol update NodeName=gpu-pg0-4,gpu-pg0-5 State=DRAIN")
    assert events[1:] == [
        "squeue -h -w gpu-pg0-4,gpu-pg0-5 -o %i",
        "gpucl-power delete gpu-pg0-4,gpu-pg0-5",
    ]
    assert "put " not in proc.stdout and not (tmp_path / "etc").exists()


def test_the_drain_only_copy_deletes_exactly_the_drained_nodes_vms_or_stops_the_resize(
    tmp_path,
) -> None:
    """Before Pulumi lowers a scale set's capacity (Azure would pick the VMs itself, by instance
    id), the drained, idle leaving nodes' own VMs are deleted through the name map; if that
    fails the Run Command fails, and `pulumi up` stops before any capacity changes."""
    proc, events = run_sync(tmp_path, busy_polls=0, drain_only=True, delete_fails=True)
    assert proc.returncode != 0
    assert events[-1] == "gpucl-power delete gpu-pg0-4,gpu-pg0-5"
    assert "deleted the VMs" not in proc.stdout


def test_growth_drains_nothing(tmp_path) -> None:
    spec, _ = load_stack_spec("azure-h100", ["partitions[0].nodes=8"])
    assert "keep='gpu-pg0-[1-8]'" in render_config_sync(spec, "azure-h100")


def test_the_health_check_never_lifts_a_resize_drain(tmp_path) -> None:
    """Its checks pass on a node the resize is waiting on: resuming it would let new jobs in."""
    from clusterctl.render.health import health_script
    from clusterctl.render.site import cloud_site

    spec, _ = load_stack_spec("azure-h100", [])
    script = health_script(spec, cloud_site(spec), check_cmd="true")
    bins = tmp_path / "bin"
    bins.mkdir()
    log = tmp_path / "log"
    for reason, resumed in (
        ("gpucl: resize: removed from the stack", False),
        ("gpucl: nvidia-smi failed", True),
    ):
        stubs = {
            "sinfo": f'case "$*" in *%E*) echo "{reason}" ;; *) echo drained ;; esac',
            "scontrol": f'echo "$*" >> {log}',
        }
        for name, body in stubs.items():
            (bins / name).write_text(f"#!/bin/bash\n{body}\n")
            (bins / name).chmod(0o755)
        log.unlink(missing_ok=True)
        env = {"PATH": "/usr/bin:/bin", "SLURM_BIN": f"{bins}/", "SLURMD_NODENAME": "gpu-pg0-4"}
        proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        assert log.exists() == resumed, reason
