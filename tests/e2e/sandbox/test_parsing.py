"""Pure helpers of the sandbox (no root needed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clusterctl.sandbox.health import parse_nodes, stand_in_script
from clusterctl.sandbox.layout import Layout

ONELINER = (
    "NodeName=node3 Arch=x86_64 CoresPerSocket=1 CPUTot=4 Gres=gpu:h100:8 State=IDLE+DRAIN "
    "Partitions=gpu Reason=gpucl: gpu 5 missing [root@2026-11-21T05:55:03]\n"
    "NodeName=node4 Arch=x86_64 CPUTot=4 Gres=gpu:h100:8 State=IDLE Partitions=gpu\n"
)


def test_parse_nodes_keeps_the_whole_reason():
    nodes = parse_nodes(ONELINER)
    assert nodes["node3"]["Reason"] == "gpucl: gpu 5 missing"
    assert nodes["node3"]["State"] == "IDLE+DRAIN"
    assert "Reason" not in nodes["node4"]


def test_stand_in_health_check_passes_shellcheck(tmp_path):
    if subprocess.run(["which", "shellcheck"], capture_output=True).returncode != 0:
        pytest.skip("shellcheck not installed")
    script = tmp_path / "health-check"
    script.write_text(stand_in_script(Layout.of(Path("/var/tmp/sandbox")), "gpucl:"))
    proc = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
