"""`status` without the Pulumi CLI: a project on the file backend (init's default) has its state on
disk, so a stack never deployed is said to be so, and a deployed one is shown from that state
(outputs with secrets masked, no last update); only another backend needs the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import error_lines, run_cli

SECRET_SIG = "4dabf18193072939515e22adb298388d"
STACK = "azure-h100"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "p"
    made = run_cli("init", "--example", STACK, str(proj), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    return proj


def _status(project: Path, *args: str):
    home = project.parent / "home"  # no ~/.pulumi/bin/pulumi, and no pulumi on PATH
    home.mkdir(exist_ok=True)
    return run_cli("status", "-s", STACK, *args, cwd=project, PATH="/usr/bin:/bin",
                   HOME=str(home))  # fmt: skip


def test_a_stack_never_deployed_is_said_so_without_the_cli(project: Path) -> None:
    res = _status(project)
    assert res.returncode == 0, res.stderr
    assert f"stack {STACK}: not deployed" in res.stdout
    assert "no Pulumi CLI here" in res.stderr


def test_a_deployed_stack_is_read_from_the_file_state(project: Path) -> None:
    urn = f"urn:pulumi:{STACK}::gpu-clusters"
    vmss = {"urn": f"{urn}::azure-native:compute:VirtualMachineScaleSet::gpu", "custom": True,
            "type": "azure-native:compute:VirtualMachineScaleSet", "id": "/subscriptions/x/vmss",
            "created": "2026-01-01T00:00:00Z"}  # fmt: skip
    secret = {SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270", "ciphertext": "x"}
    root = {"urn": f"{urn}::pulumi:pulumi:Stack::gpu-clusters-{STACK}",
            "type": "pulumi:pulumi:Stack",
            "outputs": {"clusterName": "h100", "sshPrivateKey": secret}}  # fmt: skip
    state = project / ".pulumi-state" / ".pulumi" / "stacks" / "gpu-clusters"
    state.mkdir(parents=True)
    doc = {"version": 3, "checkpoint": {"latest": {"resources": [root, vmss]}}}
    (state / f"{STACK}.json").write_text(json.dumps(doc))
    res = _status(project, "--json")
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert got["deployed"] is True
    assert got["outputs"]["clusterName"] == "h100"
    assert got["outputs"]["sshPrivateKey"] == "[secret]"


def test_another_backend_still_needs_the_cli_in_one_line(project: Path) -> None:
    pulumi_yaml = project / "Pulumi.yaml"
    text = pulumi_yaml.read_text()
    pulumi_yaml.write_text(text.split("backend:")[0])  # no backend: Pulumi Cloud
    res = _status(project)
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert "the Pulumi CLI (`pulumi`) is not on PATH" in line
