"""The team before anything boots: bad input refused with one line naming the field; the
files the nodes read; the Run Command's script; slurm.conf's enforcement and fair share; stack
edits that keep the file's comments and never write a refused team."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterctl.errors import SpecError, UserError
from clusterctl.render.cloud_init import CUSTOM_DATA_LIMIT, gzip_user_data
from clusterctl.render.team import render_team_sync, team_files
from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.stack_edit import add_user, remove_user

ROOT = Path(__file__).resolve().parents[3]
TEAM = "azure-team"


def refused(overrides: list[str], stack: str = TEAM) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_stack_spec(stack, overrides)
    return caught.value.problems


def assert_one_line_about(lines: list[str], field: str, words: str) -> None:
    hits = [ln for ln in lines if ln.startswith(f"gpu-clusters:cluster.{field}:")]
    assert len(hits) == 1 and words in hits[0], lines


@pytest.mark.parametrize(
    ("override", "field", "words"),
    [
        ("users[1].uid=20001", "users[1].uid", "more than one user"),
        ("users[2].account=physics", "users[2].account", "not declared under accounts"),
        ("accounts[0].gpuLimit=64", "accounts[0].gpuLimit", "more than the cluster's 32"),
        ("users[0].name=slurm", "users[0].name", "already a user or group"),
        ("users[0].name=azureuser", "users[0].name", "already a user or group"),
        ("users[0].uid=11100", "users[0].uid", "service user"),
        ("users[0].name=gpucl-admins", "users[0].name", "already a user or group"),
        ("accounts[1].qos=[normal, gold]", "accounts[1].qos[1]", "QoS 'gold' is not declared"),
        ("accounts[1].name=vision", "accounts[1].name", "declared twice"),
        ("accounts[0].name=root", "accounts[0].name", "Slurm's own top account"),
        ("headNode.accounting=false", "headNode.accounting", "accounting database"),
        (
            "loginNodes={count: 0, entraIdGroup: 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0}",
            "loginNodes.entraIdGroup",
            "has none",
        ),
        ("loginNodes.sku=Standard_X1", "loginNodes.sku", "unknown VM type"),
        ("users[0].sshPublicKeys=[ssh-ed25519 AAAA]", "users[0].sshPublicKeys[0]", "base64"),
        ("qos=[{name: normal, maxGpusPerUser: 40}]", "qos[0].maxGpusPerUser", "cluster's 32"),
    ],
)
def test_a_bad_team_is_refused_naming_the_field(override, field, words) -> None:
    assert_one_line_about(refused([override]), field, words)


def test_users_on_kubernetes_are_refused() -> None:
    lines = refused(["users=[]"], stack="aks-h100")
    assert any(ln.startswith("gpu-clusters:cluster.users:") for ln in lines), lines


def test_the_team_files_the_nodes_read() -> None:
    spec, _ = load_stack_spec(TEAM)
    files = team_files(spec)
    assert files["users.tsv"].splitlines() == [
        "ann\t20001\tvision\tyes",
        "bob\t20002\tlanguage\tno",
        "cat\t20003\tlanguage\tno",
    ]
    assert files["accounts.tsv"].splitlines() == [
        "vision\t1\t8\tnormal,debug",
        "language\t1\t-1\tnormal,debug,high",  # -1: no limit (clears one set before)
    ]
    assert files["qos.tsv"].splitlines()[2] == "debug\t200\t30\t8"
    assert files["keys/bob"].startswith("ssh-ed25519 ") and files["keys/bob"].endswith("\n")


def test_the_run_command_carries_the_team_and_is_not_in_the_user_data() -> None:
    spec, _ = load_stack_spec(TEAM)
    script = render_team_sync(spec, TEAM)
    for row in team_files(spec)["users.tsv"].splitlines():
        assert row in script
    assert "sacctmgr" in script and "gpucl-users.sh" in script
    from tests.conftest import plan_stack

    plan = plan_stack(TEAM)
    sched = yaml.safe_load(plan.files["cloud-init/scheduler.yaml"])
    paths = [f["path"] for f in sched["write_files"]]
    assert not any("team-sync" in p for p in paths)  # Azure caps customData at 64 KiB
    assert len(gzip_user_data(plan.files["cloud-init/scheduler.yaml"])) < CUSTOM_DATA_LIMIT
    for role in ("scheduler", "gpu"):
        doc = yaml.safe_load(plan.files[f"cloud-init/{role}.yaml"])
        by_path = {f["path"]: f for f in doc["write_files"]}
        assert "/usr/local/libexec/gpu-clusters/gpucl-users.sh" in by_path, role
        sshd = by_path["/etc/ssh/sshd_config.d/60-gpu-clusters-team.conf"]["content"]
        assert "/sched/team/keys/%u" in sshd
        runcmd = " ".join(str(c) for c in doc["runcmd"])
        assert "gpucl-users.timer" in runcmd, role


def test_slurm_conf_enforces_limits_and_fair_share_only_with_accounting() -> None:
    from tests.conftest import plan_stack

    team = plan_stack(TEAM).files["slurm/slurm.conf"]
    for line in (
        "AccountingStorageTRES=gres/gpu",
        "AccountingStorageEnforce=associations,limits,qos,safe",
        "PriorityType=priority/multifactor",
        "PriorityWeightFairshare=10000",
    ):
        assert line in team.splitlines(), line
    plain = plan_stack("azure-h100").files["slurm/slurm.conf"]
    assert "PriorityType" not in plain and "AccountingStorageEnforce" not in plain


def test_add_and_remove_keep_the_files_comments() -> None:
    text = (ROOT / "stacks" / f"Pulumi.{TEAM}.yaml").read_text()
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID6ahndl3o5DrCBL6gih7e6Q7j7G4Xr4Mh7cXn/TnmFS d@x"
    added = add_user(text, {"name": "dan", "uid": 20004, "account": "language",
                            "sshPublicKeys": [key]})  # fmt: skip
    assert added.count("# REPLACE") == text.count("# REPLACE")
    head = text.split("    users:")[0]
    assert added.startswith(head)  # everything above the team's users as it was
    doc = yaml.safe_load(added)["config"]["gpu-clusters:cluster"]
    assert [u["name"] for u in doc["users"]] == ["ann", "bob", "cat", "dan"]
    assert remove_user(added, "dan") == text
    with pytest.raises(UserError, match="in the stack already"):
        add_user(added, {"name": "dan", "uid": 20005, "account": "language"})
    with pytest.raises(UserError, match="no user 'zed'"):
        remove_user(text, "zed")


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", "users", *args, "-s", TEAM],
        cwd=cwd, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )  # fmt: skip


def test_the_cli_writes_a_valid_team_and_never_a_refused_one(tmp_path) -> None:
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    stack = tmp_path / "stacks" / f"Pulumi.{TEAM}.yaml"
    shutil.copy(ROOT / "stacks" / stack.name, stack)
    before = stack.read_text()
    bad = _cli(tmp_path, "add", "eve", "--uid", "20001", "--account", "nope", "--key", "x y")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
    errors = [ln for ln in bad.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 4, bad.stderr  # uid twice (both users), the account, the key
    assert stack.read_text() == before  # nothing written
    pub = tmp_path / "eve.pub"
    pub.write_text(  # eve's own key (cat's is refused: one key per user)
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH68ZK7iaB6xQGa5B6tUt6g4KSpNTTFOHzhJM1Onq2Y9 e\n"
    )
    good = _cli(tmp_path, "add", "eve", "--uid", "20005", "--account", "vision", "--key", str(pub))
    assert good.returncode == 0, good.stderr
    assert "clusterctl up -s azure-team" in good.stdout
    listed = _cli(tmp_path, "list").stdout.split()
    assert "eve" in listed and "20005" in listed
    assert _cli(tmp_path, "remove", "eve").returncode == 0
    assert stack.read_text() == before
