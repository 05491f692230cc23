"""The node-size substitution reaches slurm.conf wherever the cloud's text carries it: in a resize's
config-sync Run Command it travels base64-encoded (a resize in the sandbox turned every node INVAL
without it: "Low socket*core*thread count, Low CPUs, Low RealMemory")."""

from __future__ import annotations

import base64
import re

import pytest
import yaml

from clusterctl.plan.program import make_plan
from clusterctl.render.slurm_conf import render_config_sync
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


def test_the_sandbox_swaps_only_the_microsoft_sources_url_and_key() -> None:
    from clusterctl.render.cloud_init import render_cloud_init
    from clusterctl.render.user_data import MUNGE_PLACEHOLDER
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec("azure-h100")
    cloud = render_cloud_init(spec, "s", munge_key_b64=MUNGE_PLACEHOLDER, db_password="x")
    local = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nbG9jYWw=\n-----END PGP PUBLIC KEY BLOCK-----"
    out = yaml.safe_load(substitutions.rewrite_user_data(cloud, local))
    before = yaml.safe_load(cloud)
    source = out["apt"]["sources"]["slurm.list"]
    assert source["key"] == local + "\n"
    assert source["source"] == before["apt"]["sources"]["slurm.list"]["source"].replace(
        substitutions.MS_URL, substitutions.MS_STANDIN_URL
    )
    out["apt"], before["apt"] = {}, {}
    assert out["packages"] == before["packages"] and out["runcmd"] == before["runcmd"]
