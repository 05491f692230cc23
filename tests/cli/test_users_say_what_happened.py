"""`users` tells the truth about what it did: sync without a target changes nothing and says so,
list says when there is no team (or cannot be one) and has --json, a --key file that is not
there is named as missing, and one key is never given to two users."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.conftest import ROOT, error_lines, run_cli

TEAM = "azure-team"
CAT_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH67ZK7iaB6xQGa5B6tUt6g4KSpNTTFOHzhJM1Onq2Y9"


def _project(tmp_path: Path) -> Path:
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(ROOT / "stacks" / f"Pulumi.{TEAM}.yaml", tmp_path / "stacks")
    return tmp_path / "stacks" / f"Pulumi.{TEAM}.yaml"


def _add(cwd: Path, key: str):
    return run_cli("users", "add", "eve", "-s", TEAM, "--uid", "20005", "--account", "vision",
                   "--key", key, cwd=cwd)  # fmt: skip


def test_sync_without_the_sandbox_changes_nothing_and_says_so() -> None:
    res = run_cli("users", "sync", "-s", TEAM)
    assert res.returncode == 2, res.stdout
    (line,) = error_lines(res.stderr)
    assert "changes nothing" in line and f"clusterctl up -s {TEAM}" in line
    assert "now declares" not in res.stdout


def test_list_says_when_a_stack_has_no_team_and_refuses_kubernetes(cli) -> None:
    res = cli("users", "list", "-s", "azure-h100")
    assert res.exit_code == 0 and "declares no users" in res.stdout, res.output
    k8s = run_cli("users", "list", "-s", "aks-h100")
    assert k8s.returncode == 2 and "Kubernetes" in k8s.stderr, k8s.stderr
    doc = json.loads(cli("users", "list", "-s", TEAM, "--json").stdout)
    assert [u["name"] for u in doc["users"]] == ["ann", "bob", "cat"]
    assert doc["users"][2]["sshPublicKeys"][0].startswith(CAT_KEY)


def test_a_missing_key_file_is_named_as_missing(tmp_path) -> None:
    stack = _project(tmp_path)
    before = stack.read_text()
    res = _add(tmp_path, str(tmp_path / "eve.pub"))
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert "eve.pub: no such file" in line and "OpenSSH" not in line
    assert stack.read_text() == before


def test_one_key_is_never_given_to_two_users(tmp_path) -> None:
    stack = _project(tmp_path)
    before = stack.read_text()
    res = _add(tmp_path, f"{CAT_KEY} eve@laptop")
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert "users[3].sshPublicKeys[0]" in line and "already cat's" in line
    assert stack.read_text() == before
