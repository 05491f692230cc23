"""The config sync (the Run Command every `pulumi up` sends the scheduler) writes each Slurm file
only when it differs, then reconfigures, which since Slurm 23.11 restarts slurmctld. It must
carry the very bytes cloud-init wrote at boot: its slurm.conf lacked the final newline that
YAML's `content: |` gives, so every `up` found it changed and restarted slurmctld (seen in the
soak: a time-scaled line appended to it joined its last line)."""

from __future__ import annotations

import base64
import re

import pytest
import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.slurm_conf import render_config_sync
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.load import load_stack_spec
from tests.conftest import SLURM_STACKS


@pytest.mark.parametrize("stack", SLURM_STACKS)
def test_an_unchanged_stack_syncs_the_bytes_cloud_init_wrote(stack: str) -> None:
    spec, _ = load_stack_spec(stack)
    script = render_config_sync(spec, stack)
    synced = {
        m.group(1): base64.b64decode("".join(m.group(2).split())).decode()
        for m in re.finditer(r"put (\S+) <<'B64'\n(.*?)\nB64\n", script, re.S)
    }
    assert synced, "the sync carries no files"
    user_data = yaml.safe_load(
        render_cloud_init(spec, stack, munge_key_b64=MUNGE_PLACEHOLDER, db_password="x")
    )
    booted = {f["path"]: f.get("content") for f in user_data["write_files"]}
    for path, text in synced.items():
        assert booted.get(path) == text, path
