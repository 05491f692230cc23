"""slurmctld's HTTP metrics (Slurm 25.11+) stay off: SlurmctldPort is open to every GPU and login
node (slurmd, srun and sackd need it), so whatever slurmctld serves there, every user's job can
read. SchedMD loads the OpenMetrics plugin only when slurm.conf sets MetricsType (metrics.html);
the rendered slurm.conf of every Slurm stack sets none, nor anything that would load it."""

from __future__ import annotations

import pytest

from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import render_slurm
from clusterctl.spec.load import load_stack_spec
from tests.conftest import SLURM_STACKS


def _settings(conf: str) -> dict[str, str]:
    pairs = (ln.split("=", 1) for ln in conf.splitlines() if "=" in ln and not ln.startswith("#"))
    return {k.strip().lower(): v for k, v in pairs}


@pytest.mark.parametrize("stack", SLURM_STACKS)
def test_slurmctld_serves_no_metrics_on_its_port(stack: str) -> None:
    spec, _ = load_stack_spec(stack)
    settings = _settings(render_slurm(spec, cloud_site(spec), stack)["slurm.conf"])
    assert "slurmctldport" in settings  # the parse reads the file's settings
    assert "metricstype" not in settings
    assert not any(k.startswith("metrics") for k in settings), sorted(settings)
