"""The conventions pulumi and kubectl users bring: a selected stack (`stack select`, as `pulumi
stack select`; $CLUSTERCTL_STACK for CI), -s's default everywhere; global flags anywhere on the
line; and Tab completing stacks, examples and SKUs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import H100, ROOT, error_lines, run_cli


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    proj = tmp_path_factory.mktemp("sel") / "p"
    made = run_cli("init", "--example", "azure-h100", str(proj), cwd=proj.parent)
    assert made.returncode == 0, made.stderr
    (proj / "stacks" / "Pulumi.second.yaml").write_text(
        (proj / "stacks" / "Pulumi.azure-h100.yaml").read_text()
    )
    return proj


def _images_stack(res) -> str:
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["stack"]


def test_without_s_or_a_selection_one_line_names_the_three_ways(project: Path) -> None:
    res = run_cli("images", "--json", cwd=project)
    assert res.returncode == 2
    (line,) = json.loads(res.stdout)["problems"]
    assert line.startswith("-s/--stack: no stack given")
    assert "CLUSTERCTL_STACK" in line and "clusterctl stack select STACK" in line


def test_a_selected_stack_is_used_and_s_and_the_variable_win_over_it(project: Path) -> None:
    try:
        sel = run_cli("stack", "select", "second", cwd=project)
        assert sel.returncode == 0, sel.stderr
        assert (project / ".clusterctl" / "stack").read_text().strip() == "second"
        assert _images_stack(run_cli("images", "--json", cwd=project)) == "second"
        assert _images_stack(run_cli("images", "--json", "-s", "azure-h100", cwd=project)) == (
            "azure-h100"
        )
        env = run_cli("images", "--json", cwd=project, CLUSTERCTL_STACK="azure-h100")
        assert _images_stack(env) == "azure-h100"
        shown = run_cli("stack", "show", cwd=project)
        assert shown.stdout.split()[0] == "second"
        listed = run_cli("stacks", cwd=project).stdout.splitlines()
        assert any(line.startswith("second* ") for line in listed), listed
        hist = run_cli("validate", "history", cwd=project)  # the selected stack's history
        assert hist.returncode == 0 and "stack second" in hist.stdout, hist.stderr
        # where -s is one target among others, no target named means the selected stack
        for args in (["validate", "--nccl"], ["node", "replace", "gpu-pg0-1"]):
            res = run_cli(*args, cwd=project)
            assert res.returncode == 2 and "stack second: no deployed outputs" in res.stderr, args
    finally:
        assert run_cli("stack", "unselect", cwd=project).returncode == 0
    assert run_cli("images", cwd=project).returncode == 2


def test_selecting_a_stack_the_project_lacks_is_one_line_with_the_closest(project) -> None:
    res = run_cli("stack", "select", "azure-h10", cwd=project)
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert "stack select azure-h10" in line and "did you mean 'azure-h100'" in line
    assert not (project / ".clusterctl" / "stack").exists()


def test_global_flags_are_read_after_the_command_and_command_flags_before_it(
    project: Path, tmp_path: Path
) -> None:
    after = run_cli("stacks", "--json", "--project-dir", str(project), cwd=tmp_path)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["project"] == str(project.resolve())
    before = run_cli("-s", "second", "--json", "images", cwd=project)
    assert _images_stack(before) == "second"
    judged = run_cli(
        "validate", "--nccl", "--from-log", str(ROOT / "tests/data/nccl/"
        "nccl_tests_issue309_h100_2node.txt"), "--sku", H100, "--debug", "--verbose",
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr


def test_stacks_shows_what_each_builds_and_what_plan_refuses(project: Path) -> None:
    bad = project / "stacks" / "Pulumi.broken.yaml"
    bad.write_text("config:\n  gpu-clusters:cluster:\n    name: ok-name\n    cloud: gcp\n")
    try:
        res = run_cli("stacks", cwd=project)
        doc = json.loads(run_cli("stacks", "--json", cwd=project).stdout)
    finally:
        bad.unlink()
    assert res.returncode == 0, res.stderr
    header, *rows = res.stdout.splitlines()
    assert header.split() == ["NAME", "CLOUD", "REGION", "SCHEDULER", "SKU", "NODES"]
    h100 = next(r for r in rows if r.startswith("azure-h100 "))
    assert h100.split() == ["azure-h100", "azure", "eastus", "slurm", H100, "2"]
    assert any(r.startswith("broken: refused by plan: ") and "cloud" in r for r in rows), rows
    by_name = {s["name"]: s for s in doc["stacks"]}
    assert by_name["azure-h100"]["sku"] == H100 and by_name["azure-h100"]["nodes"] == 2
    assert by_name["broken"]["problem"] and by_name["broken"]["cloud"] is None


@pytest.mark.parametrize(
    ("words", "want"),
    [
        ("clusterctl plan -s sec", ["second"]),
        ("clusterctl stack select az", ["azure-h100"]),
        ("clusterctl init --example aws", ["aws-p5"]),
        ("clusterctl validate --nccl --sku Standard_ND96isr_H1", [H100]),
    ],
)
def test_tab_completes_stacks_examples_and_skus(
    project: Path, words: str, want, monkeypatch
) -> None:
    from typer.testing import CliRunner

    from clusterctl.cli import app

    monkeypatch.chdir(project)
    env = {
        "_CLUSTERCTL_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    got = CliRunner().invoke(app, [], prog_name="clusterctl", env=env)
    assert got.output.split() == want, got.output
