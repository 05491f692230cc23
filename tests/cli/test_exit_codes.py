"""CI tells a command given wrong (exit 2, as click gives any usage error) from a run that proved
nothing (exit 3, inconclusive); both are documented in --help."""

from __future__ import annotations

import pytest

from tests.cli.conftest import H100, H100_LOG, NCCL_DATA, error_lines, run_cli

EXIT_USAGE, EXIT_INCONCLUSIVE = 2, 3  # the documented contract (clusterctl.constants)
REDUCE = NCCL_DATA / "wohlbier_dgx2_v100_reduce.txt"  # another benchmark's log: the wrong file
SHORT = NCCL_DATA / "derived_truncated_no_footer.txt"  # an all_reduce_perf log cut short


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--from-log", str(H100_LOG), "--sku", "Standard_Nope"), EXIT_USAGE),  # a typo
        (("--from-log", str(H100_LOG), "--sku", H100, "--nodes", "3"), EXIT_USAGE),
        (("--from-log", str(REDUCE), "--sku", H100), EXIT_USAGE),
        (("--from-log", str(SHORT), "--sku", H100), EXIT_INCONCLUSIVE),
        (
            ("--from-log", str(NCCL_DATA / "derived_garbage.txt"), "--sku", H100, "--nodes", "1"),
            EXIT_INCONCLUSIVE,
        ),
    ],
)
def test_a_usage_error_and_an_inconclusive_run_exit_differently(cli, args, code) -> None:
    res = cli("validate", "--nccl", *args)
    assert res.exit_code == code, res.output
    assert len([x for x in error_lines(res.stderr) if x.startswith("error:")]) == 1


def test_the_exit_codes_are_in_help(cli) -> None:
    for args in ((), ("validate",)):
        text = " ".join(cli(*args, "--help").stdout.split())
        assert "2 usage error" in text and "3 inconclusive" in text, args


def test_inconclusive_is_three_in_a_fresh_process_too() -> None:
    res = run_cli("validate", "--nccl", "--from-log", str(SHORT), "--sku", H100)
    assert res.returncode == 3, res.stderr


def test_version_is_a_command_as_well_as_a_flag(cli) -> None:
    flag, command = cli("--version"), cli("version")
    assert command.exit_code == 0 and command.stdout == flag.stdout
    assert command.stdout.startswith("clusterctl ")
