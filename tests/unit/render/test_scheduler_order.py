"""The scheduler's runcmd finishes every file slurmctld hands to configless nodes before it starts
slurmctld: a node whose slurmd fetched plugstack.conf before gpucl-pyxis.sh named pyxis in it, and
registered after that step's `scontrol reconfigure`, kept a plugstack without pyxis, and a
--container-image job ran bare on it (seen in a 1+2 sandbox boot)."""

from __future__ import annotations

import pytest
import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.load import load_stack_spec
from tests.conftest import SLURM_STACKS


@pytest.mark.parametrize("stack", SLURM_STACKS)
def test_pyxis_is_in_plugstack_before_slurmctld_starts(stack: str) -> None:
    spec, _ = load_stack_spec(stack, [])
    ud = render_cloud_init(spec, stack, munge_key_b64=MUNGE_PLACEHOLDER, db_password="x")
    steps = [
        " ".join(map(str, c)) if isinstance(c, list) else str(c)
        for c in yaml.safe_load(ud)["runcmd"]
    ]
    pyxis = next(i for i, s in enumerate(steps) if s.endswith("gpucl-pyxis.sh"))
    start = next(i for i, s in enumerate(steps) if s == "systemctl restart slurmctld")
    assert pyxis < start, steps
    # nothing after the start rewrites a file under /etc/slurm
    assert not any("/etc/slurm" in s for s in steps[start + 1 :]), steps[start + 1 :]
