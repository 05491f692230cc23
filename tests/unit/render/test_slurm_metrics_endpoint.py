"""Slurm 25.11's OpenMetrics endpoints answer on SlurmctldPort, which every node of the VNet must
reach, without authentication unless PrivateData or MetricsAuthUsers is set (SchedMD
doc/html/metrics.shtml, "Security Considerations"). slurmctld serves them only when MetricsType is
set: with none, metrics_g_init() leaves the plugin a no-op (src/interfaces/metrics.c at
slurm-25-11-7-1). The cluster's own monitoring reads Slurm through scontrol/sinfo on the scheduler,
so no shipped stack may turn the endpoint on."""

from __future__ import annotations

import pytest

from clusterctl.platform import scheduler_of
from clusterctl.project import find_project
from clusterctl.render.bundle import render_bundle
from clusterctl.spec.load import load_stack_spec

SLURM_STACKS = [
    s
    for s in find_project().stacks()
    if scheduler_of(load_stack_spec(s, [])[0].scheduler).head_node
]


@pytest.mark.parametrize("stack", SLURM_STACKS)
def test_no_shipped_slurm_conf_serves_metrics_on_the_controller_port(stack: str) -> None:
    assert SLURM_STACKS, "no Slurm stack found"
    spec, _ = load_stack_spec(stack, [])
    conf = render_bundle(spec, stack)["slurm/slurm.conf"]
    keys = {line.split("=", 1)[0].strip().lower() for line in conf.splitlines() if "=" in line}
    assert not keys & {"metricstype", "metricsparameters", "metricsauthusers"}, stack
