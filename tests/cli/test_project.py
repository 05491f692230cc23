"""Stacks are found where users keep them: the project in the current folder (or --project-dir),
never the shipped examples unless `clusterctl init --example` copied one out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clusterctl.errors import UserError
from clusterctl.project import BACKEND_ENV, PROJECT_DIR_ENV, find_project, init_project


def clusterctl(*args: str, cwd: Path, env: dict[str, str] | None = None):
    full = {k: v for k, v in os.environ.items() if k not in (PROJECT_DIR_ENV, BACKEND_ENV)}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", *args],
        cwd=cwd, env=full, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_init_then_plan_from_an_empty_folder_and_a_renamed_stack(tmp_path: Path) -> None:
    made = clusterctl("init", "--example", "azure-h100", "myproj", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    proj = tmp_path / "myproj"
    assert (proj / "Pulumi.yaml").is_file() and (proj / "stacks/Pulumi.azure-h100.yaml").is_file()
    (proj / "stacks/Pulumi.mine.yaml").write_text(
        (proj / "stacks/Pulumi.azure-h100.yaml").read_text()
    )
    for stack in ("azure-h100", "mine"):
        planned = clusterctl("plan", "-s", stack, "--json", cwd=proj / "stacks")
        assert planned.returncode == 0, planned.stderr
        assert f'"stack": "{stack}"' in planned.stdout
    # the same project named from elsewhere
    named = clusterctl("--project-dir", str(proj), "plan", "-s", "mine", "--json", cwd=tmp_path)
    assert named.returncode == 0, named.stderr


def test_no_project_is_one_line_and_exit_2(tmp_path: Path) -> None:
    got = clusterctl("plan", "-s", "azure-h100", cwd=tmp_path)
    assert got.returncode == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "clusterctl init --example" in lines[0], got.stderr
    assert "Traceback" not in got.stderr


def test_unknown_stack_names_the_folder_and_the_stacks_there(tmp_path: Path) -> None:
    init_project("aws-p5", tmp_path / "p")
    got = clusterctl("plan", "-s", "azure-h100", cwd=tmp_path / "p")
    assert got.returncode == 2
    assert "stacks there: aws-p5" in got.stderr and str(tmp_path / "p" / "stacks") in got.stderr


def test_init_refuses_unknown_example_and_an_existing_project(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"choose one of .*azure-h100"):
        init_project("gcp-a3", tmp_path / "x")
    init_project("azure-a100", tmp_path / "y")
    with pytest.raises(UserError, match="exists already"):
        init_project("azure-a100", tmp_path / "y")


def test_backend_url_env_wins_over_pulumi_yaml(tmp_path: Path, monkeypatch) -> None:
    init_project("azure-h100", tmp_path / "p")
    monkeypatch.delenv(PROJECT_DIR_ENV, raising=False)
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    project = find_project(tmp_path / "p" / "stacks")
    assert project.dir == (tmp_path / "p").resolve()
    assert project.local_state_dir() == project.dir / ".pulumi-state"
    monkeypatch.setenv(BACKEND_ENV, f"file://{tmp_path}/state")
    assert find_project(tmp_path / "p").local_state_dir() == tmp_path / "state"
    monkeypatch.setenv(BACKEND_ENV, "azblob://mycontainer")
    assert find_project(tmp_path / "p").local_state_dir() is None


def test_project_dir_env_must_hold_a_project(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(PROJECT_DIR_ENV, str(tmp_path))
    with pytest.raises(UserError, match=r"--project-dir .*no Pulumi\.yaml"):
        find_project()


def test_odd_stack_names_and_markup_in_errors_are_one_clean_line(tmp_path: Path) -> None:
    init_project("azure-h100", tmp_path / "p")
    got = clusterctl("plan", "-s", "x[/y]", cwd=tmp_path / "p")
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert got.stderr.count("error:") == 1 and "letters, digits" in got.stderr


def test_sandbox_vm_explain_lists_the_substitutions_without_root(tmp_path: Path) -> None:
    got = clusterctl("sandbox", "up", "--explain", cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    for name in ("os-image", "slurm-smd", "imds", "node-size", "github-downloads"):
        assert f"- {name} [" in got.stdout
