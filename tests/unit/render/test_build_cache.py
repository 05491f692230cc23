"""pyxis and LBNL NHC are built once per cluster, not once per node: gpucl-build-cache.sh installs
a build from the cluster's cache on /sched, or builds here and publishes it there. Run under bash
with /sched and / moved into a temporary folder and `mountpoint` stubbed."""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from clusterctl.render.scripts import node_scripts
from clusterctl.render.site import cloud_site
from clusterctl.spec.load import load_stack_spec

BUILD = "mkdir -p $DESTDIR/usr/sbin && echo built >> {log} && echo nhc > $DESTDIR/usr/sbin/nhc"


def run(tmp_path: Path, *, mounted: bool, name: str = "nhc") -> subprocess.CompletedProcess:
    spec, _ = load_stack_spec("azure-h100", [])
    script = node_scripts(spec, cloud_site(spec), None)["gpucl-build-cache.sh"]
    root, sched, bins = tmp_path / "root", tmp_path / "sched", tmp_path / "bin"
    for d in (root, sched, bins):
        d.mkdir(exist_ok=True)
    script = script.replace("/sched/", f"{sched}/").replace("-C / ", f"-C {root} ")
    (bins / "mountpoint").write_text(f"#!/bin/sh\nexit {0 if mounted else 1}\n")
    (bins / "mountpoint").chmod(0o755)
    build = BUILD.format(log=tmp_path / "builds")
    env = {"PATH": f"{bins}:/usr/bin:/bin"}
    return subprocess.run(["bash", "-c", script, "gpucl-build-cache", name, "1.2.3", build],
                          capture_output=True, text=True, env=env)  # fmt: skip


def builds(tmp_path: Path) -> int:
    log = tmp_path / "builds"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_the_first_node_builds_and_publishes_the_next_installs_without_building(tmp_path) -> None:
    first = run(tmp_path, mounted=True)
    assert first.returncode == 0, first.stderr
    assert "built here and published" in first.stdout
    (tarball,) = (tmp_path / "sched/h100/build").glob("nhc-1.2.3-*.tar.gz")
    assert (tmp_path / "root/usr/sbin/nhc").read_text() == "nhc\n"
    with tarfile.open(tarball) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert "./usr/sbin/nhc" in members and members["./usr/sbin/nhc"].uid == 0
    (tmp_path / "root/usr/sbin/nhc").unlink()
    second = run(tmp_path, mounted=True)
    assert second.returncode == 0, second.stderr
    assert "installed from" in second.stdout
    assert builds(tmp_path) == 1  # built once for both nodes
    assert (tmp_path / "root/usr/sbin/nhc").read_text() == "nhc\n"


def test_without_sched_the_node_builds_for_itself_and_publishes_nothing(tmp_path) -> None:
    got = run(tmp_path, mounted=False)
    assert got.returncode == 0, got.stderr
    assert "not published" in got.stdout and builds(tmp_path) == 1
    assert not (tmp_path / "sched/h100").exists()
    assert (tmp_path / "root/usr/sbin/nhc").exists()


def test_the_key_carries_what_the_build_depends_on(tmp_path) -> None:
    """Version, CPU architecture, OS release and the Slurm release (pyxis is built against it):
    a node of another image never installs a build that is not its own."""
    run(tmp_path, mounted=True, name="pyxis")
    (tarball,) = (tmp_path / "sched/h100/build").glob("pyxis-*.tar.gz")
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True)
    assert tarball.name.startswith(f"pyxis-1.2.3-{arch.stdout.strip()}-")
    assert "-slurm" in tarball.name


def test_gpu_nodes_build_pyxis_and_nhc_through_the_cache_and_mount_sched_first() -> None:
    from clusterctl.render.cloud_init import render_cloud_init
    from clusterctl.render.user_data import MUNGE_PLACEHOLDER

    spec, _ = load_stack_spec("azure-h100", [])
    gpu = render_cloud_init(
        spec, "azure-h100", munge_key_b64=MUNGE_PLACEHOLDER, partition=spec.partitions[0]
    )
    assert "autoconf" not in gpu.split("runcmd:")[0]  # not installed unless NHC is built here
    runcmd = gpu.split("runcmd:")[1]
    assert runcmd.index("timeout 20 mount /sched") < runcmd.index("gpucl-pyxis.sh")
    assert "gpucl-build-cache.sh nhc" in runcmd
    pyxis = node_scripts(spec, cloud_site(spec), None)["gpucl-pyxis.sh"]
    assert "gpucl-build-cache.sh pyxis" in pyxis
