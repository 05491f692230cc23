"""A GPU node whose first boot reaches the NFS mounts before the scheduler
exports them waits for the exports (bounded, saying what is missing) instead of ending its setup
at `mount -a` under set -e. The rendered script runs under bash with stand-ins for mount and
mountpoint that fail the first tries."""

from __future__ import annotations

import os
import subprocess

import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.paths import MOUNT_RETRY
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.load import load_stack_spec
from tests.conftest import node_script

FAKE_MOUNT = """#!/bin/sh
# succeeds from try $READY_AFTER on; records what it mounted
n=$(cat "$STATE/tries" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$STATE/tries"
if [ "$n" -lt "$READY_AFTER" ]; then
  echo "mount.nfs: access denied by server while mounting $1" >&2; exit 32
fi
echo "$1" >> "$STATE/mounted"
"""
FAKE_MOUNTPOINT = """#!/bin/sh
grep -qx "$2" "$STATE/mounted" 2>/dev/null
"""


def _run(tmp_path, ready_after: int) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "gpucl-mounts.sh"
    script.write_text(node_script("azure-h100", "gpucl-mounts.sh"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (
        ("mount", FAKE_MOUNT),
        ("mountpoint", FAKE_MOUNTPOINT),
        ("mkdir", "#!/bin/sh\n"),
    ):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "STATE": str(tmp_path),
        "READY_AFTER": str(ready_after),
        "GPUCL_MOUNT_DELAY": "0",
        "GPUCL_MOUNT_TOTAL": "2",
    }
    return subprocess.run(
        ["bash", str(script)], env=env, capture_output=True, text=True, timeout=30
    )


def test_a_late_export_is_waited_for_and_each_wait_says_what_is_missing(tmp_path) -> None:
    proc = _run(tmp_path, ready_after=3)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "mounted").read_text().split() == ["/home", "/sched"]
    assert "gpucl-mounts: not mounted yet: /home (mount.nfs: access denied" in proc.stderr


def test_an_export_that_never_comes_fails_after_the_bound_naming_it(tmp_path) -> None:
    proc = _run(tmp_path, ready_after=10**9)
    assert proc.returncode == 1
    assert "gpucl-mounts: gave up after 2 s, not mounted: /home" in proc.stderr
    assert "/sched" in proc.stderr.splitlines()[-1]


def test_the_gpu_nodes_first_boot_mounts_through_the_bounded_retry() -> None:
    spec, _ = load_stack_spec("azure-h100")
    ud = render_cloud_init(spec, "azure-h100", munge_key_b64=MUNGE_PLACEHOLDER,
                           partition=spec.partitions[0])  # fmt: skip
    steps = [
        " ".join(map(str, c)) if isinstance(c, list) else c for c in yaml.safe_load(ud)["runcmd"]
    ]
    assert not any("mount -a" in s for s in steps), steps
    assert any(s.endswith("/gpucl-mounts.sh") for s in steps), steps
    assert MOUNT_RETRY["total_s"] >= 600  # the scheduler's first boot takes minutes
