"""A stack file with several problems reports them all in one run: the structural ones (a wrong
type, an unknown key, a malformed value) and the rules' (an unknown SKU, an unknown region)
together, not the second kind only after the first is fixed."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli.conftest import ROOT, error_lines, run_cli

FIVE = {
    "region: eastus ": "region: eastus9 ",
    "sku: Standard_ND96isr_H100_v5": "sku: Standard_ND96isr_H100_v6",
    "        nodes: 2 ": "        nodes: lots ",
    "addressSpace: 10.40.0.0/16": "addressSpace: 10.40.0.0/33",
    "intervalSeconds: 300": "intervalSecs: 300",
}


def _project(tmp_path: Path, edits: dict[str, str]) -> Path:
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    text = (ROOT / "stacks" / "Pulumi.azure-h100.yaml").read_text()
    for old, new in edits.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (tmp_path / "stacks" / "Pulumi.five.yaml").write_text(text)
    return tmp_path


def test_five_problems_are_five_lines_in_one_run(tmp_path) -> None:
    res = run_cli("plan", "-s", "five", cwd=_project(tmp_path, FIVE))
    assert res.returncode == 2, res.stderr
    lines = error_lines(res.stderr)
    assert len(lines) == 5, res.stderr
    for field in ("network.addressSpace", "partitions[0].nodes", "healthChecks.intervalSecs",
                  "partitions[0].sku", "cluster.region"):  # fmt: skip
        assert sum(field in line for line in lines) == 1, (field, lines)
