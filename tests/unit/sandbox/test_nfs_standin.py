"""The NFS stand-in's mount.nfs records what the kernel would show (SERVER:PATH nfs4) for the NHC
stand-in; systemd mounts /home and /sched at the same time at boot, and a lost record drained a
freshly powered-up node ("check_fs_mount: /sched not mounted")."""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import clusterctl.sandbox.vm as vm

MOUNT_NFS = Path(vm.__file__).parent / "files/standins/nfs-common/usr/sbin/mount.nfs"


def test_concurrent_mounts_each_keep_their_record(tmp_path: Path) -> None:
    # "/" and "/proc" are mount points already: the stand-in only records them (no lab needed)
    env = {**os.environ, "GPUCL_SANDBOX_RUN": str(tmp_path)}
    mounts = [("sched:/shared/home", "/"), ("sched:/shared/sched", "/proc")]

    def mount(pair):
        spec, target = pair
        return subprocess.run(
            ["bash", str(MOUNT_NFS), spec, target, "-o", "vers=4.1"], env=env, timeout=30
        ).returncode

    for _ in range(40):
        (tmp_path / "nfs-mounts").unlink(missing_ok=True)
        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(mount, mounts)) == [0, 0]
        lines = sorted((tmp_path / "nfs-mounts").read_text().splitlines())
        assert lines == ["sched:/shared/home / nfs4", "sched:/shared/sched /proc nfs4"]
