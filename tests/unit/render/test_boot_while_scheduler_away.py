"""A GPU node that boots while the scheduler (the NFS server of /home and /sched) is away or being
re-created: its nofail mounts fail at boot and systemd never tries them again. slurmd's start
mounts them, retrying for as long as the scheduler is away, and runs nothing before they are in;
a failed mount must not leave slurmd failed for good (RequiresMountsFor= did: Restart= does not
follow a dependency failure). The rendered script runs under bash with stand-ins for mount and
mountpoint."""

from __future__ import annotations

import re

from clusterctl.render.paths import MOUNT_RETRY, SCRATCH, SHARED_MOUNTS
from tests.conftest import node_script
from tests.unit.render.fake_mounts import run_mounts


def _run(tmp_path, *args: str, ready_after: int, hang: bool = False):
    return run_mounts(
        tmp_path,
        *args,
        ready_after=ready_after,
        message="Connection timed out",
        hang=hang,
        quick_sleep=True,
        settings={"TOTAL": "1", "ATTEMPT": "2"},
        timeout=40,
    )


def test_slurmds_wait_outlasts_the_first_boot_bound_until_the_scheduler_is_back(tmp_path):
    """100 failed tries (50 delays: past the 1 s bound given here) before the scheduler is back."""
    proc = _run(tmp_path, "--wait", ready_after=100)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted((tmp_path / "mounted").read_text().split()) == ["/home", "/sched"]
    assert "gave up" not in proc.stderr
    assert "gpucl-mounts: not mounted yet: /home (mount.nfs: Connection timed out" in proc.stderr


def test_a_mount_that_hangs_on_a_gone_host_is_cut_and_tried_again(tmp_path):
    proc = _run(tmp_path, "--wait", ready_after=2, hang=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted((tmp_path / "mounted").read_text().split()) == ["/home", "/sched"]
    assert MOUNT_RETRY["attempt_s"] + MOUNT_RETRY["delay_s"] <= 60  # back within a minute


def _dropin() -> str:
    script = node_script("azure-team", "gpu-node-setup.sh")
    m = re.search(r"slurmd\.service\.d/gpu-clusters\.conf <<UNIT\n(.*?)\nUNIT\n", script, re.S)
    assert m, "the slurmd drop-in is no longer written by gpu-node-setup.sh"
    return m.group(1)


def _values(unit: str, key: str) -> list[str]:
    return [w for line in unit.splitlines() if line.startswith(f"{key}=") for w in
            line.split("=", 1)[1].split()]  # fmt: skip


def test_slurmd_starts_only_once_its_start_has_mounted_the_shared_file_systems() -> None:
    unit = _dropin()
    pre = [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("ExecStartPre=")]
    assert pre[0].endswith("/gpucl-mounts.sh --wait") and not pre[0].startswith("-"), pre
    # the team's users, whose boot run found no /sched, come in before slurmd takes jobs
    assert pre[1].startswith("-") and pre[1].endswith("/gpucl-users.sh"), pre
    for path in SHARED_MOUNTS:
        assert f"{path.strip('/')}.mount" in _values(unit, "After")
        assert path not in _values(unit, "RequiresMountsFor"), unit
    # the scratch is local (gpucl-scratch.service): its mount may keep slurmd from starting
    assert _values(unit, "RequiresMountsFor") == [SCRATCH], unit


def _login_user_data() -> dict:
    import yaml

    from clusterctl.render.cloud_init import render_cloud_init
    from clusterctl.render.user_data import MUNGE_PLACEHOLDER
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec("azure-team")
    return yaml.safe_load(
        render_cloud_init(spec, "azure-team", munge_key_b64=MUNGE_PLACEHOLDER, login_index=0)
    )


def test_a_login_node_rebooted_while_the_scheduler_is_away_mounts_home_when_it_returns():
    """The login node's fstab entries are nofail too: before, only its first boot tried them (a
    cloud-init loop), and a later boot while the scheduler was away left /home unmounted for good.
    A service runs the GPU nodes' wait at every boot, without holding the boot up."""
    ud = _login_user_data()
    files = {f["path"]: f["content"] for f in ud["write_files"]}
    unit = files.get("/etc/systemd/system/gpucl-mounts.service")
    assert unit, sorted(files)
    assert _values(unit, "ExecStart") == [
        "/usr/local/libexec/gpu-clusters/gpucl-mounts.sh",
        "--wait",
    ]
    # a oneshot would keep multi-user.target (and `is-system-running`) waiting on the scheduler
    assert _values(unit, "Type") == ["exec"] and _values(unit, "RemainAfterExit") == ["yes"]
    assert _values(unit, "WantedBy") == ["multi-user.target"]
    assert "remote-fs.target" in _values(unit, "After")
    script = files["/usr/local/libexec/gpu-clusters/gpucl-mounts.sh"]
    assert script == node_script("azure-team", "gpucl-mounts.sh")  # the GPU nodes' own wait
    steps = [" ".join(c) if isinstance(c, list) else c for c in ud["runcmd"]]
    assert "systemctl enable --now gpucl-mounts.service" in steps, steps
    first = steps.index("/usr/local/libexec/gpu-clusters/gpucl-mounts.sh")  # bounded first boot
    assert first < steps.index("systemctl enable --now gpucl-mounts.service")
