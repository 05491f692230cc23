"""Output that goes to a pipe or a file is not wrapped (as pulumi and kubectl do)."""

from __future__ import annotations

from tests.cli.conftest import run_cli


def test_piped_output_is_not_wrapped(tmp_path) -> None:
    """As pulumi and kubectl do: a pipe or a file gets whole lines, not 80 columns."""
    res = run_cli("plan", "-s", "azure-gb200", COLUMNS="")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    (headline,) = [line for line in lines if line.startswith("estimated cost")]
    assert "disks and traffic extra)" in headline  # the whole sentence on its line
    assert max(len(line) for line in lines) > 100
    warnings = [line for line in res.stderr.splitlines() if line.strip()]
    assert all(line.startswith(("warning:", "info:", "error:")) for line in warnings), warnings
