"""A stack file's structural errors say what to write, not pydantic's class names and internals;
a cloud written in capitals is told it is lowercase."""

from __future__ import annotations

import pytest

from tests.cli.conftest import error_lines, run_cli


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ("partitions=[gpu]", "partitions[0]: must be a mapping of settings (key: value lines)"),
        ("partitions=[]", "partitions: needs at least 1 item; the list is empty"),
        ("cloud=Azure", "cloud: 'Azure': write it 'azure' (lowercase)"),
        ("cloud=gcp", "cloud: 'gcp' is not one of azure, aws"),
    ],
)
def test_structural_errors_say_what_to_write(setting, words) -> None:
    res = run_cli("plan", "-s", "azure-h100", "--set", setting)
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert words in line, line
    assert "instance of" not in line and "after validation" not in line
