"""A GPU node whose first boot reaches the NFS mounts before the scheduler
exports them waits for the exports (bounded, saying what is missing) instead of ending its setup
at `mount -a` under set -e. The rendered script runs under bash with stand-ins for mount and
mountpoint that fail the first tries."""

from __future__ import annotations

import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.paths import MOUNT_RETRY
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.load import load_stack_spec
from tests.unit.render.fake_mounts import run_mounts


def _run(tmp_path, ready_after: int):
    return run_mounts(
        tmp_path,
        ready_after=ready_after,
        message="access denied by server",
        settings={"DELAY": "0", "TOTAL": "2"},
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
