"""slurmctld, slurmdbd, munge and slurmd come back after a crash or a SIGKILL.
Slurm's upstream units have no Restart=; a sandbox fault run (SIGKILL of slurmctld) showed nothing
bring it back. A daemon that needs no other host gets a bounded on-failure drop-in; one that waits
for another host before it is ready (slurmd and sackd for slurmctld, slurmctld for slurmdbd) is
never given up on."""

from __future__ import annotations

import configparser

import pytest
import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.load import load_stack_spec


def _user_data(stack: str, role: str) -> dict:
    spec, _ = load_stack_spec(stack, ["headNode.accounting=true"])
    part = None if role == "scheduler" else spec.partitions[0]
    ud = render_cloud_init(
        spec, stack, munge_key_b64=MUNGE_PLACEHOLDER, partition=part, db_password="x"
    )
    return yaml.safe_load(ud)


def _restart_dropin(doc: dict, unit: str) -> configparser.ConfigParser:
    files = {f["path"]: f["content"] for f in doc["write_files"]}
    drop = [p for p in files if p.startswith(f"/etc/systemd/system/{unit}.service.d/")]
    parsed = configparser.ConfigParser(strict=False, interpolation=None)
    parsed.optionxform = str  # type: ignore[assignment,method-assign]
    for path in drop:
        parsed.read_string(files[path])
    return parsed


@pytest.mark.parametrize("stack", ["azure-h100", "azure-a100"])
@pytest.mark.parametrize(
    ("role", "units"), [("scheduler", ["munge", "slurmdbd"]), ("gpu", ["munge"])]
)
def test_a_daemon_that_needs_no_other_host_restarts_on_failure_with_a_bound(
    stack: str, role: str, units
) -> None:
    doc = _user_data(stack, role)
    for unit in units:
        conf = _restart_dropin(doc, unit)
        assert conf.get("Service", "Restart", fallback=None) == "on-failure", unit
        assert 1 <= int(conf.get("Service", "RestartSec")) <= 60, unit
        # the start limit belongs in [Unit] (systemd ignores it in [Service] since v230)
        burst = int(conf.get("Unit", "StartLimitBurst"))
        interval = int(conf.get("Unit", "StartLimitIntervalSec"))
        # bounded, and reachable: the burst's restarts fit inside the interval
        assert 2 <= burst <= 10 and burst * int(conf.get("Service", "RestartSec")) < interval


@pytest.mark.parametrize("stack", ["azure-h100", "azure-a100"])
@pytest.mark.parametrize(
    ("role", "unit", "restart"),
    [("scheduler", "slurmctld", "on-failure"), ("gpu", "slurmd", "always")],
)
def test_a_daemon_that_waits_for_another_host_never_gives_up(
    stack: str, role: str, unit: str, restart: str
) -> None:
    """slurmd (configless) loops on its config fetch before READY while slurmctld is away, and
    slurmctld on slurmdbd: a start timeout kills the wait and a start limit ends the retries, so a
    node booted while the scheduler is down stayed failed."""
    conf = _restart_dropin(_user_data(stack, role), unit)
    assert conf.get("Service", "Restart") == restart
    assert 1 <= int(conf.get("Service", "RestartSec")) <= 60
    assert conf.get("Service", "TimeoutStartSec") in ("infinity", "0")
    assert conf.get("Unit", "StartLimitIntervalSec") == "0"  # systemd: 0 turns the limit off
    assert not conf.has_option("Unit", "StartLimitBurst")
