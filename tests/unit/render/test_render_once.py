"""A plan renders each node role's files once: the Pulumi program, the resize's config sync and
`plan --out` read one SlurmPlan (clusterctl/render/roles.py) made for the run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from clusterctl.plan.program import make_plan
from clusterctl.render import scripts, slurm_conf


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts every template the Slurm files' and the node scripts' renderers render."""
    seen: Counter[str] = Counter()
    for module in (slurm_conf, scripts):
        monkeypatch.setattr(module, "render_template", _counting(module.render_template, seen))
    return seen


def _counting(render: Callable[..., str], seen: Counter[str]) -> Callable[..., str]:
    def template(name: str, **ctx: object) -> str:
        seen[name] += 1
        return render(name, **ctx)

    return template


def test_a_plan_renders_the_slurm_files_and_each_roles_scripts_once(counted) -> None:
    plan = make_plan("azure-h100", ["loginNodes.count=1", "headNode.accounting=true"])
    assert plan.files["slurm/slurm.conf"].startswith("#")
    assert "cloud-init/login.yaml" in plan.files  # the login role was rendered too
    for template in ("slurm.conf", "gres.conf", "cgroup.conf", "topology.conf"):
        assert counted[f"slurm/{template}.j2"] == 1, template
    assert counted["scripts/slurm-config-sync.sh.j2"] == 2  # the sync and the resize's drain
    # each role's scripts (node_scripts renders pyxis.conf once a call): the scheduler's, which
    # a login node takes a subset of, and each partition's
    assert counted["slurm/pyxis.conf.j2"] == 1 + len(plan.spec.partitions)


def test_the_config_sync_carries_the_slurm_conf_plan_out_writes() -> None:
    """One route to slurm.conf: the Run Command's script holds the bytes `--out` writes."""
    import base64
    import re

    plan = make_plan("azure-h100")
    (run,) = [
        r
        for r in plan.run.by_type("azure-native:compute:VirtualMachineRunCommandByVirtualMachine")
        if r.inputs["runCommandName"] == "gpu-clusters-slurm-config"
    ]
    assert run.inputs["source"]["script"] == plan.files["scripts/slurm-config-sync.sh"]
    blobs = re.findall(
        r"\n((?:[A-Za-z0-9+/=]{76}\n)+[A-Za-z0-9+/=]*)", run.inputs["source"]["script"]
    )
    decoded = {base64.b64decode("".join(b.split())).decode(errors="replace") for b in blobs}
    assert slurm_conf.as_written(plan.files["slurm/slurm.conf"]) in decoded
