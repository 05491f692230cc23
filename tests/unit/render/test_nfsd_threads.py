"""The scheduler's NFS server runs nfsd threads for the cluster's size (4 per GPU or login node,
never below nfs-utils' default 8, at most 256) instead of the default 8 for any cluster: every
mount of every node shared those 8. A resize's config sync brings the count along: it rewrites
the nfs.conf.d file and sets a running server's threads in place."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.slurm_conf import render_config_sync
from clusterctl.spec.load import load_stack_spec


def _threads(stack: str, *overrides: str) -> int:
    spec, _ = load_stack_spec(stack, list(overrides))
    doc = yaml.safe_load(render_cloud_init(spec, stack, munge_key_b64="AAAA"))
    (conf,) = [f["content"] for f in doc["write_files"] if f["path"].startswith("/etc/nfs.conf.d/")]
    lines = conf.split()
    assert lines[0] == "[nfsd]"
    return int(lines[1].removeprefix("threads="))


@pytest.mark.parametrize(
    ("overrides", "threads"),
    [
        (["partitions[0].nodes=1"], 8),
        (["partitions[0].nodes=10"], 40),
        (["partitions[0].nodes=10", "loginNodes.count=2"], 48),
        (["partitions[0].nodes=100"], 256),
    ],
)
def test_nfsd_threads_follow_the_node_count(overrides: list[str], threads: int) -> None:
    assert _threads("azure-h100", *overrides) == threads


def _run_sync(tmp_path: Path, nodes: int, booted_threads: int) -> tuple[str, list[str]]:
    """The resize's config sync under bash, the scheduler's files and nfsd's /proc file under
    tmp_path, stub commands logging what they were asked."""
    spec, _ = load_stack_spec("azure-h100", [f"partitions[0].nodes={nodes}"])
    etc, proc_nfsd, bins, log = (tmp_path / d for d in ("etc", "nfsd", "bin", "events"))
    for d in (etc, proc_nfsd, bins):
        d.mkdir()
    (etc / "50-gpu-clusters.conf").write_text(f"[nfsd]\nthreads={booted_threads}\n")
    (proc_nfsd / "threads").write_text(f"{booted_threads}\n")
    script = (
        render_config_sync(spec, "azure-h100")
        .replace("/etc/slurm/", f"{etc}/")
        .replace("/etc/nfs.conf.d/", f"{etc}/")
        .replace("/proc/fs/nfsd/", f"{proc_nfsd}/")
    )
    stubs = {
        "cloud-init": "exit 0",
        "systemctl": f'echo "systemctl $*" >> {log}',  # every unit is active
        "sinfo": "exit 0",
        "squeue": "exit 0",
        "sleep": "exit 0",
        "scontrol": f'[ "$1" = show ] && exit 0; echo "scontrol $*" >> {log}',
        "rpc.nfsd": f'echo "rpc.nfsd $*" >> {log}; echo "$1" > {proc_nfsd}/threads',
        # the files' contents, without `-o root`: the fast suite runs as any user
        "install": 'mkdir -p "$(dirname "${@: -1}")" && cp "${@: -2:1}" "${@: -1}"',
    }
    for name, body in stubs.items():
        (bins / name).write_text(f"#!/bin/bash\n{body}\n")
        (bins / name).chmod(0o755)
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                         env={"PATH": f"{bins}:/usr/bin:/bin"})  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert (etc / "50-gpu-clusters.conf").read_text() == f"[nfsd]\nthreads={4 * nodes}\n"
    return run.stdout, log.read_text().splitlines()


def test_a_resize_rewrites_the_nfsd_threads_and_applies_them_without_a_restart(
    tmp_path: Path,
) -> None:
    out, events = _run_sync(tmp_path, nodes=10, booted_threads=8)
    assert "rpc.nfsd 40" in events
    assert not any(e.startswith("systemctl restart nfs") for e in events), events
    assert "nfsd now runs 40 threads" in out


def test_an_unchanged_thread_count_leaves_nfsd_alone(tmp_path: Path) -> None:
    _, events = _run_sync(tmp_path, nodes=10, booted_threads=40)
    assert not any(e.startswith("rpc.nfsd") for e in events), events
