"""The power identity out of reach. The scheduler's managed identity may start,
deallocate, reimage and delete every GPU VM, and Azure IMDS hands its token to any local process
that asks; users log in on the scheduler. The user-data installs a unit that lets only root and
the slurm user (the power program's) reach IMDS, on every boot before logins and SSH."""

from __future__ import annotations

import configparser
import re

import pytest
import yaml

from clusterctl.constants import SERVICE_IDS
from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.load import load_stack_spec

STACKS = ["azure-h100", "azure-a100", "azure-h200"]
UNIT = "/etc/systemd/system/gpucl-imds-guard.service"


def _user_data(stack: str, role: str) -> dict:
    spec, _ = load_stack_spec(stack)
    part = None if role == "scheduler" else spec.partitions[0]
    return yaml.safe_load(
        render_cloud_init(spec, stack, munge_key_b64=MUNGE_PLACEHOLDER, partition=part)
    )


def _unit(doc: dict) -> configparser.ConfigParser:
    files = {f["path"]: f["content"] for f in doc["write_files"]}
    parsed = configparser.ConfigParser(strict=False, interpolation=None)
    parsed.optionxform = str  # type: ignore[assignment,method-assign]
    parsed.read_string(files[UNIT])
    return parsed


@pytest.mark.parametrize("stack", STACKS)
def test_only_root_and_slurm_may_reach_imds_on_the_scheduler(stack: str) -> None:
    doc = _user_data(stack, "scheduler")
    unit = _unit(doc)
    start = unit.get("Service", "ExecStart")
    rules = re.findall(r"iptables -w 10 -[CI] OUTPUT (?:1 )?([^'|]+?)(?: 2>/dev/null)?(?= \|\||'$)",
                       start)  # fmt: skip
    assert len(rules) == 2 and rules[0] == rules[1], start  # checked, then inserted first
    rule = rules[0].split()
    assert rule[:4] == ["-d", "169.254.169.254/32", "-p", "tcp"], rule
    exempt = [rule[i + 1] for i, tok in enumerate(rule) if tok == "--uid-owner"]
    assert exempt == ["0", str(SERVICE_IDS["slurm"])], rule
    assert rule.count("!") == 2 and rule[-4:] == ["-j", "REJECT", "--reject-with", "tcp-reset"]
    before = unit.get("Unit", "Before").split()
    assert {"ssh.service", "systemd-user-sessions.service", "slurmctld.service"} <= set(before)
    assert unit.get("Install", "WantedBy") == "multi-user.target"  # every boot, not only the first
    assert "iptables" in doc["packages"]
    steps = [s for s in doc["runcmd"] if isinstance(s, list)]
    enable = ["systemctl", "enable", "--now", "gpucl-imds-guard.service"]
    assert enable in steps
    first_start = next(i for i, s in enumerate(steps) if "restart" in s or "--now" in s)
    assert steps.index(enable) == first_start, steps  # before any daemon the user-data starts
