"""The node-size substitution reaches slurm.conf wherever the cloud's text carries it: in a resize's
config-sync Run Command it travels base64-encoded (a resize in the sandbox turned every node INVAL
without it: "Low socket*core*thread count, Low CPUs, Low RealMemory")."""

from __future__ import annotations

import base64
import re

import pytest

from clusterctl.plan.program import make_plan
from clusterctl.render.engine import render_config_sync
from clusterctl.sandbox.vm import substitutions


def _slurm_conf(script: str) -> str:
    m = re.search(r"put \S+/slurm\.conf <<'B64'\n(.*?)\nB64\n", script, re.S)
    assert m, "no slurm.conf in the script"
    return base64.b64decode("".join(m.group(1).split())).decode()


def test_config_sync_gets_the_node_size_line_and_nothing_else_changes() -> None:
    script = render_config_sync(make_plan("azure-h100", ["partitions[0].nodes=3"]).spec, "s")
    out = substitutions.rewrite_config_sync(script)
    before, after = _slurm_conf(script), _slurm_conf(out)
    assert substitutions.NODE_SIZE_LINE not in before
    added = [ln for ln in after.splitlines() if ln not in before.splitlines()]
    assert added == [substitutions.NODE_SIZE_LINE]
    assert "NodeName=gpu-pg0-[1-3]" in after
    outside = re.sub(r"<<'B64'\n.*?\nB64\n", "", script, flags=re.S)
    assert re.sub(r"<<'B64'\n.*?\nB64\n", "", out, flags=re.S) == outside


def test_a_script_without_slurm_conf_is_refused() -> None:
    with pytest.raises(ValueError, match=r"no slurm\.conf"):
        substitutions.rewrite_config_sync("#!/bin/bash\nscontrol reconfigure\n")
