"""A plan renders each node role's files once: the Pulumi program, the resize's config sync and
`plan --out` read one SlurmPlan (clusterctl/render/roles.py) and one UserDataPlan
(clusterctl/render/user_data.py) made for the run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from clusterctl.plan.program import make_plan
from clusterctl.render import cloud_init, scripts, slurm_conf


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts every template the Slurm files', the node scripts' and the user-data's renderers
    render."""
    seen: Counter[str] = Counter()
    for module in (slurm_conf, scripts, cloud_init):
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


@pytest.mark.parametrize("logins", [1, 2])
def test_a_plan_renders_each_roles_user_data_once(counted, logins) -> None:
    """The program fills the deploy-time secrets into the user-data `plan --out` writes."""
    plan = make_plan("azure-h100", [f"loginNodes.count={logins}", "headNode.accounting=true"])
    assert "cloud-init/scheduler.yaml" in plan.files
    assert counted["cloud-init/scheduler.yaml.j2"] == 1
    assert counted["cloud-init/login.yaml.j2"] == logins  # each login node names its own host
    assert counted["cloud-init/compute.yaml.j2"] == len(plan.spec.partitions)
    # the mount wait: each partition's scripts and the login nodes' (all of them, from the plan)
    assert counted["scripts/gpucl-mounts.sh.j2"] == len(plan.spec.partitions) + 1


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


def test_the_filled_user_data_is_what_rendering_with_the_secrets_gives() -> None:
    """Filling the placeholders in gives the bytes rendering with the secrets would."""
    from clusterctl.render.cloud_init import render_cloud_init
    from clusterctl.render.roles import SCHEDULER, plan_slurm
    from clusterctl.render.user_data import login_role, plan_user_data
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec(
        "azure-h100",
        ["loginNodes.count=1", "headNode.accounting=true", "storage.kind=azure-files-nfs"],
    )
    slurm = plan_slurm(spec, "azure-h100")
    rendered = plan_user_data(spec, "azure-h100", slurm)
    secrets = {"munge_key_b64": "bXVuZ2U=", "files_account": "acct7"}
    scheduler = {"db_password": "pw-9", "identity_client_id": "0000-client"}
    for role, extra, direct in [
        (SCHEDULER, scheduler, {}),
        (login_role(0), {}, {"login_index": 0}),
        (spec.partitions[0].name, {}, {"partition": spec.partitions[0]}),
    ]:
        filled = rendered.filled(role, **secrets, **extra)
        assert filled == render_cloud_init(
            spec, "azure-h100", plan=slurm, **secrets, **extra, **direct
        ), role
        assert "acct7" in filled and "bXVuZ2U=" in filled
    with pytest.raises(ValueError, match="storage account"):
        rendered.filled(SCHEDULER, munge_key_b64="k", db_password="pw")
    with pytest.raises(ValueError, match="database password"):
        rendered.filled(SCHEDULER, munge_key_b64="k", files_account="a")
