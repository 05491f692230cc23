"""`clusterctl notebook` refuses what cannot run before it reaches any cluster: one `error:` line
naming the flag or the stack setting to fix, exit 2."""

from __future__ import annotations

import shlex

import pytest

from tests.cli.conftest import ROOT, error_lines, run_cli


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


def _documented() -> list[str]:
    text = (ROOT / "docs" / "team.md").read_text()
    return [line for line in text.splitlines() if line.startswith("clusterctl notebook -s ")]


def test_the_documented_notebook_commands_reach_the_login_node_as_the_user(
    cli, monkeypatch
) -> None:
    """docs/team.md's commands, as written, against a deployed stack's recorded outputs: the
    login node's address (not the scheduler's), the user and key given, the request as asked."""
    import clusterctl.notebook.session as session
    import clusterctl.validate.targets as targets

    outputs = {"scheduler": "slurm", "schedulerAddress": "10.0.0.4",
               "loginAddresses": ["20.30.40.50"]}  # fmt: skip
    monkeypatch.setattr(targets, "read_stack_outputs", lambda stack, project: outputs)
    seen = []
    monkeypatch.setattr(session, "run_notebook", lambda nb, **kw: seen.append(nb) or 0)
    commands = _documented()
    assert len(commands) == 2, commands
    for line in commands:
        res = cli(*shlex.split(line)[1:])
        assert res.exit_code == 0, res.output
    first, second = seen
    assert (first.target.host, first.target.user, first.target.identity) == (
        "20.30.40.50", "ann", "~/.ssh/ann")  # fmt: skip
    assert (first.request.gres, first.request.minutes) == ("gpu:1", 240)
    assert (second.request.gres, second.request.minutes, second.request.partition) == (
        "gpu:2", 90, "gpu")  # fmt: skip
