"""`clusterctl notebook` refuses what cannot run before it reaches any cluster: one `error:` line
naming the flag or the stack setting to fix, exit 2."""

from __future__ import annotations

import pytest

from tests.cli.conftest import error_lines, run_cli


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["-s", "azure-team", "--gpus", "1", "--gres", "gpu:1"], "--gpus and --gres"),
        (["-s", "azure-team", "--partition", "nosuch"], "--partition nosuch"),
        (["-s", "azure-team", "--gres", "gpu:1g.10gb:1"], "--gres gpu:1g.10gb:1"),
        (["-s", "aks-h100"], "kubernetes.kueue"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, names) -> None:
    res = run_cli("notebook", *args)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = error_lines(res.stderr)
    assert names in line, line
