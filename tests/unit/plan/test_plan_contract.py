"""`clusterctl plan --json` and `--out` follow the contract in DESIGN.md."""

from __future__ import annotations

import json
import subprocess
import sys


def test_plan_json_contract(tmp_path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "clusterctl",
            "plan",
            "-s",
            "azure-h100",
            "--json",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) >= {"stack", "resources", "outputs", "cost_per_hour_usd", "findings"}
    assert doc["stack"] == "azure-h100"
    for res in doc["resources"]:
        # the contract's four keys, plus the resource options a resource has
        options = {"protect", "hooks", "ignoreChanges", "replaceOnChanges", "deleteBeforeReplace"}
        assert (
            {"type", "name", "parent", "inputs"}
            <= set(res)
            <= {
                "type",
                "name",
                "parent",
                "inputs",
                *options,
            }
        )
    assert any(r.get("protect") for r in doc["resources"])  # the shared data disk
    vm = next(r for r in doc["resources"] if r["type"].endswith(":VirtualMachine"))
    assert vm["deleteBeforeReplace"] is True and vm["replaceOnChanges"]  # the scheduler
    types = {r["type"] for r in doc["resources"]}
    assert "azure-native:compute:VirtualMachineScaleSet" in types
    vmss = next(r for r in doc["resources"] if r["type"].endswith("VirtualMachineScaleSet"))
    assert "singlePlacementGroup" in vmss["inputs"]  # wire (camelCase) names
    assert vmss["inputs"]["virtualMachineProfile"]["osProfile"]["customData"] == "[secret]"
    assert doc["outputs"]["sshPrivateKey"] == "[secret]"
    assert doc["cost_per_hour_usd"] > 0
    assert all({"level", "message"} <= set(f) for f in doc["findings"])
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert {
        "plan.json",
        "slurm/slurm.conf",
        "slurm/gres.conf",
        "cloud-init/scheduler.yaml",
    } <= written
    assert json.loads((tmp_path / "plan.json").read_text())["stack"] == "azure-h100"


def test_human_plan_shows_tree_cost_and_findings() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-h100"],
        capture_output=True,
        text=True,
        timeout=180,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "VirtualMachineScaleSet" in result.stdout
    assert "estimated cost: $" in result.stdout and "per day" in result.stdout
    assert "RFC 5737" in result.stdout


def test_every_command_has_help() -> None:
    top = subprocess.run(
        [sys.executable, "-m", "clusterctl", "--help"], capture_output=True, text=True, timeout=60
    )
    assert top.returncode == 0
    commands = ["plan", "catalog", "schema"]
    for cmd in commands:
        assert cmd in top.stdout
        sub = subprocess.run(
            [sys.executable, "-m", "clusterctl", cmd, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert sub.returncode == 0 and "Usage" in sub.stdout, cmd
    version = subprocess.run(
        [sys.executable, "-m", "clusterctl", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert version.stdout.startswith("clusterctl ")
