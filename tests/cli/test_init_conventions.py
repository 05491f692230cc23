"""`init` as `pulumi new` is used: the current folder by default, a second example added to a
project of yours (only its stack file), a next line a shell runs as printed whatever the folder's
name, and a Pulumi.yaml whose virtualenv holds the program's packages."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from tests.cli.conftest import error_lines, run_cli


def _next_line(stdout: str) -> str:
    (line,) = [x for x in stdout.splitlines() if x.startswith("next: ")]
    return line.removeprefix("next: ")


def test_init_without_a_folder_makes_the_current_one_a_project(tmp_path: Path) -> None:
    res = run_cli("init", "--example", "azure-h100", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "Pulumi.yaml").is_file()
    assert (tmp_path / "stacks" / "Pulumi.azure-h100.yaml").is_file()
    assert _next_line(res.stdout) == "clusterctl plan -s azure-h100"  # no `cd .`


def test_a_second_example_adds_only_its_stack_file(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    assert run_cli("init", "--example", "azure-h100", str(proj), cwd=tmp_path).returncode == 0
    (proj / "__main__.py").write_text("# my program\n")
    res = run_cli("init", "--example", "aws-p5", str(proj), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "wrote 1 file to" in res.stdout
    assert sorted(p.name for p in (proj / "stacks").iterdir()) == [
        "Pulumi.aws-p5.yaml",
        "Pulumi.azure-h100.yaml",
    ]
    assert (proj / "__main__.py").read_text() == "# my program\n"  # the project is left alone
    again = run_cli("init", "--example", "aws-p5", str(proj), cwd=tmp_path)
    assert again.returncode == 2
    (line,) = error_lines(again.stderr)
    assert "Pulumi.aws-p5.yaml: exists already" in line and "--force" in line


def test_the_next_line_runs_in_a_shell_as_printed(tmp_path: Path) -> None:
    odd = tmp_path / "my project's dir"
    res = run_cli("init", "--example", "azure-h100", str(odd), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    step = _next_line(res.stdout)
    cd_part = step.split(" && ")[0]
    assert shlex.split(cd_part) == ["cd", str(odd)]
    shell = subprocess.run(["sh", "-c", f"{cd_part} && pwd"], capture_output=True, text=True)
    assert shell.returncode == 0 and shell.stdout.strip() == str(odd)


def test_the_project_runs_pulumi_in_the_virtualenv_that_has_the_packages(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    res = run_cli("init", "--example", "azure-h100", str(proj), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    options = yaml.safe_load((proj / "Pulumi.yaml").read_text())["runtime"]["options"]
    if sys.prefix != sys.base_prefix:  # the tests run in a virtualenv: Pulumi is pointed at it
        venv = Path(options["virtualenv"])
        assert venv == Path(sys.prefix)
        probe = [str(venv / "bin" / "python"), "-c", "import components.program, pulumi"]
        assert subprocess.run(probe, capture_output=True, cwd=tmp_path).returncode == 0
    else:  # no virtualenv to name: the shipped .venv, and init says how to make it
        assert options["virtualenv"] == ".venv"
        assert "python3 -m venv .venv" in res.stdout
