"""pyxis and LBNL NHC are built once per cluster, not once per node: gpucl-build-cache.sh installs
a build from the cluster's cache on /sched, or builds here and publishes it there. Run under bash
with /sched and / moved into a temporary folder and `mountpoint` stubbed."""

from __future__ import annotations

import subprocess
import tarfile
import time
from pathlib import Path

from clusterctl.render.scripts import node_scripts
from clusterctl.render.site import cloud_site
from clusterctl.spec.load import load_stack_spec

BUILD = "mkdir -p $DESTDIR/usr/sbin && echo built >> {log} && echo nhc > $DESTDIR/usr/sbin/nhc"


def script_for(tmp_path: Path, *, mounted: bool) -> tuple[str, dict[str, str]]:
    spec, _ = load_stack_spec("azure-h100", [])
    script = node_scripts(spec, cloud_site(spec), None)["gpucl-build-cache.sh"]
    root, sched, bins = tmp_path / "root", tmp_path / "sched", tmp_path / "bin"
    for d in (root, sched, bins):
        d.mkdir(exist_ok=True)
    script = script.replace("/sched/", f"{sched}/").replace("-C / ", f"-C {root} ")
    (bins / "mountpoint").write_text(f"#!/bin/sh\nexit {0 if mounted else 1}\n")
    (bins / "mountpoint").chmod(0o755)
    return script, {"PATH": f"{bins}:/usr/bin:/bin"}


def run(tmp_path: Path, *, mounted: bool, name: str = "nhc") -> subprocess.CompletedProcess:
    script, env = script_for(tmp_path, mounted=mounted)
    build = BUILD.format(log=tmp_path / "builds")
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
    # the mounts' bounded wait comes before both builds, so a new cluster's nodes share them
    # (at creation they used to try /sched for 20 s, then each built pyxis and NHC itself)
    assert "timeout 20 mount" not in runcmd
    mounts = runcmd.index("gpucl-mounts.sh]")
    assert mounts < runcmd.index("gpucl-pyxis.sh") < runcmd.index("gpucl-build-cache.sh nhc")
    assert runcmd.index("apt-get install -y /tmp") < mounts  # enroot meanwhile: no /sched needed
    pyxis = node_scripts(spec, cloud_site(spec), None)["gpucl-pyxis.sh"]
    assert "gpucl-build-cache.sh pyxis" in pyxis


def test_nodes_booting_at_once_build_once_the_others_wait_for_the_builder(tmp_path) -> None:
    """A new cluster's nodes all reach the build at once: the first takes the key's lock in the
    cache and builds; the second waits on the lock, then installs the first's build."""
    script, env = script_for(tmp_path, mounted=True)
    gate = tmp_path / "gate"
    slow = f"while [ ! -e {gate} ]; do sleep 0.05; done; " + BUILD.format(log=tmp_path / "builds")
    argv = ["bash", "-c", script, "gpucl-build-cache", "nhc", "1.2.3"]
    first = subprocess.Popen([*argv, slow], stdout=subprocess.PIPE, text=True, env=env)
    second = None
    try:
        lock = tmp_path / "sched/h100/build"
        for _ in range(200):  # the first holds the lock once its .lock file exists
            if list(lock.glob(".*.lock")):
                break
            time.sleep(0.05)
        second = subprocess.Popen([*argv, BUILD.format(log=tmp_path / "builds")],
                                  stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
        time.sleep(0.5)
        assert second.poll() is None  # waiting on the builder, not building beside it
    finally:  # the first builder waits on the gate: never leave it (or the second) running
        gate.touch()
        out_first, _ = first.communicate(timeout=30)
        out_second = second.communicate(timeout=30)[0] if second else ""
    assert first.returncode == 0 and second.returncode == 0
    assert "built here and published" in out_first
    assert "waiting for it" in out_second and "installed from" in out_second
    assert builds(tmp_path) == 1


def test_a_builder_that_never_finishes_is_waited_for_a_bounded_time(tmp_path) -> None:
    script, env = script_for(tmp_path, mounted=True)
    (tmp_path / "sched/h100/build").mkdir(parents=True)
    key_lock = tmp_path / "sched/h100/build/held.lock"
    holder = subprocess.Popen(["flock", str(key_lock), "sleep", "30"])
    try:
        time.sleep(0.3)
        script = script.replace('exec 9>>"$cache/.$key.lock"', f'exec 9>>"{key_lock}"')
        got = subprocess.run(
            ["bash", "-c", script, "gpucl-build-cache", "nhc", "1.2.3",
             BUILD.format(log=tmp_path / "builds")],
            capture_output=True, text=True, env={**env, "GPUCL_BUILD_LOCK_S": "1"}, timeout=20,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert got.returncode == 0, got.stderr
    assert "still locked after 1 s; building here" in got.stdout
    assert builds(tmp_path) == 1
