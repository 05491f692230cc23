"""Under --json every error is `{"error": ...}` on stdout, with the exit code the
same error has without --json (as `pulumi --json` and `sky` users expect)."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import ROOT, run_cli

NCCL_DAMAGED = ROOT / "tests" / "data" / "nccl" / "derived_garbage.txt"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("plan", "-s", "no-such-stack"), "no-such-stack"),  # a UserError out of the command
        (("plan",), "--stack"),  # click's usage error: a missing option
        (("catalog", "--cloud", "gcp"), "--cloud gcp"),  # bail() inside the command
        (
            (
                "validate",
                "--nccl",
                "--from-log",
                str(NCCL_DAMAGED),
                "--nodes",
                "1",
                "--fail-below",
                "1",
            ),
            "no all_reduce_perf result rows",
        ),
    ],
)
def test_errors_are_json_on_stdout_with_the_same_exit_code(args, needle) -> None:
    plain = run_cli(*args)
    as_json = run_cli(*args, "--json")
    # 2: a usage error; 3: a damaged log, which is inconclusive
    code = 3 if str(NCCL_DAMAGED) in args else 2
    assert plain.returncode == as_json.returncode == code, (plain.stderr, as_json.stdout)
    doc = json.loads(as_json.stdout)
    assert needle in doc["error"], doc
    assert "Traceback" not in as_json.stderr
    assert needle in plain.stderr and plain.stdout == ""
