"""The after-boot checks read real command output and name the node and the stage."""

from __future__ import annotations

import subprocess

from clusterctl.sandbox.vm import checks


def done(stdout: str = "", rc: int = 0, stderr: str = ""):
    return subprocess.CompletedProcess([], rc, stdout, stderr)


def test_boot_problems_name_each_failure() -> None:
    reports = {
        "sched": {"cloud_init": "done", "errors": [], "failed_units": [], "system": "running"},
        "gpu1": {
            "cloud_init": "error",
            "errors": ["('scripts_user', RuntimeError('runcmd failed'))"],
            "failed_units": ["slurmd.service"],
            "system": "degraded",
        },
    }
    lines = [p.line() for p in checks.boot_problems(reports)]
    assert lines[0].startswith("gpu1: cloud-init: cloud-init error; ('scripts_user'")
    assert "gpu1: systemd: failed: slurmd.service" in lines
    assert "gpu1: systemd: is-system-running: degraded" in lines
    assert not any(x.startswith("sched") for x in lines)


def test_log_errors_keep_real_errors_only() -> None:
    log = (
        "[2026-11-22T09:00:00] slurmctld version 24.11.5 started\n"
        "[2026-11-22T09:00:01] error: Invalid SlurmctldParameters: cloud_reg_addrs\n"
        "[2026-11-22T09:00:02] slurmd: error: Node configuration differs from hardware: x\n"
        "[2026-11-22T09:00:03] fatal: Unable to determine this slurmd's NodeName\n"
    )
    bad = checks.log_errors(log)
    assert bad == [log.splitlines()[1], log.splitlines()[3]]


def test_slurm_problems_need_idle_nodes_with_gres_then_an_srun_from_all() -> None:
    sinfo = "gpu-pg0-1 idle gpu:h100:8\ngpu-pg0-2 drained gpu:h100:8\n"

    def run(node, argv):
        assert node == "sched"
        return done(sinfo)

    (p,) = checks.slurm_problems(run, "sched", ["gpu-pg0-1", "gpu-pg0-2"], "gpu:h100:8", timeout=0)
    assert p.line() == "gpu-pg0-2: slurm: state drained, gres gpu:h100:8"

    def run_ok(node, argv):
        if argv[0] == "sinfo":
            return done("a idle gpu:h100:8\nb idle gpu:h100:8\n")
        return done("a\nb\n")

    assert checks.slurm_problems(run_ok, "sched", ["a", "b"], "gpu:h100:8") == []


def test_munge_credential_must_decode_on_the_next_node() -> None:
    def run(node, argv):
        if argv == ["munge", "-n"]:
            return done(f"MUNGE:{node}:")
        ok = node == "a"  # b cannot decode a's credential: another key
        return done(rc=0 if ok else 1, stderr="" if ok else "unmunge: Error: Invalid credential")

    (p,) = checks.munge_problems(run, ["a", "b"])
    assert p.node == "b" and "Invalid credential" in p.line()


def test_daemons_must_be_active_and_a_skipped_one_says_why() -> None:
    status = (
        "○ slurmd.service - Slurm node daemon\n"
        "     Active: inactive (dead)\n"
        "  Condition: start condition unmet at Sun 2026-11-22 15:25:21 UTC\n"
        "             └─ ConditionPathExists=/etc/slurm/slurm.conf was not met\n"
    )

    def run(node, argv):
        if argv[:2] == ["systemctl", "is-active"]:
            return done("inactive\n" if (node, argv[2]) == ("gpu1", "slurmd") else "active\n")
        return done(status)

    roles = {"sched": "scheduler", "gpu1": "gpu", "gpu2": "gpu"}
    (p,) = checks.daemon_problems(run, roles)
    assert p.node == "gpu1" and p.stage == "slurmd.service inactive"
    assert "ConditionPathExists=/etc/slurm/slurm.conf was not met" in p.line()


def test_the_slurmd_stand_in_starts_without_slurm_conf_as_upstream_does() -> None:
    """Upstream's etc/slurmd.service.in (Slurm 24.11, which SchedMD's slurm-smd packaging ships)
    comments out ConditionPathExists=slurm.conf so that a configless slurmd starts; Debian's own
    unit keeps it. The stand-in claimed to be upstream's but kept Debian's line, which left every
    configless GPU node without slurmd."""
    from pathlib import Path

    units = Path(checks.__file__).parent / "files" / "standins"
    slurmd = (units / "slurm-smd-slurmd/usr/lib/systemd/system/slurmd.service").read_text()
    slurmctld = (units / "slurm-smd-slurmctld/usr/lib/systemd/system/slurmctld.service").read_text()
    active = lambda text: [ln for ln in text.splitlines() if ln.startswith("Condition")]  # noqa: E731
    assert active(slurmd) == []
    assert active(slurmctld) == ["ConditionPathExists=/etc/slurm/slurm.conf"]


def test_stand_in_units_start_their_daemons_as_upstream_24_11_does() -> None:
    """Type= as in upstream etc/*.service.in of Slurm 24.11 (the stand-in binaries' version): a
    notify unit around a daemon that never notifies times out (slurmdbd did: accounting never came
    up in the sandbox)."""
    from pathlib import Path

    units = Path(checks.__file__).parent / "files" / "standins"
    want = {"slurmd": "notify", "slurmctld": "notify", "slurmdbd": "simple"}
    for daemon, kind in want.items():
        text = (units / f"slurm-smd-{daemon}/usr/lib/systemd/system/{daemon}.service").read_text()
        assert f"\nType={kind}\n" in text, daemon


def test_slurmdbd_24_11s_bootstrap_note_is_allowed_and_only_for_the_root_association() -> None:
    """24.11's slurmdbd logs it while the first account is added just after the cluster (its
    associations are made all the same); a missing association of any other id is an error."""
    log = (
        "[2026-11-28T06:42:46.237] slurmdbd version 24.11.5 started\n"
        "[2026-11-28T06:42:50.919] error: We can't find assoc 1 on cluster team\n"
        "[2026-11-28T06:43:50.919] error: We can't find assoc 7 on cluster team\n"
    )
    assert checks.log_errors(log) == [log.splitlines()[2]]
