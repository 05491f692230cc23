"""A Pulumi.yaml whose project was renamed is named as such, not reported as missing."""

from __future__ import annotations

import pytest

from tests.cli.conftest import ROOT, error_lines, run_cli


@pytest.mark.parametrize("how", ["cwd", "project-dir"])
def test_a_renamed_project_says_its_name_is_the_problem(tmp_path, how) -> None:
    text = "\n" + (ROOT / "Pulumi.yaml").read_text()
    assert text.count("\nname: gpu-clusters\n") == 1
    renamed = text.replace("\nname: gpu-clusters\n", "\nname: my-gpus\n")[1:]
    (tmp_path / "Pulumi.yaml").write_text(renamed)
    if how == "cwd":
        res = run_cli("plan", "-s", "azure-h100", cwd=tmp_path)
    else:
        res = run_cli("--project-dir", str(tmp_path), "plan", "-s", "azure-h100")
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert "names project 'my-gpus', not 'gpu-clusters'" in line and "no Pulumi.yaml" not in line
