"""What `validate` prints on the terminal is what it found and what it will exit with: the notes
JSON, JUnit and the HTML report carry, the reason as plain lines, a --from-log hint that works,
and no verdict shown before a history it cannot write turns it into another exit code."""

from __future__ import annotations

from tests.cli.conftest import H100, H100_LOG, error_lines, run_cli


def test_the_fabric_unproven_note_is_on_the_terminal_too(cli) -> None:
    # this log has no NCCL INFO lines: the verdict rests on bandwidth alone
    res = cli("validate", "--nccl", "--from-log", str(H100_LOG), "--sku", H100)
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "note: 2-node: fabric unproven" in text and "NCCL_DEBUG=INFO" in text


def test_the_reason_is_a_line_of_its_own_not_a_caption(cli, tmp_path) -> None:
    low = tmp_path / "low.txt"
    low.write_text(H100_LOG.read_text().replace("469.10", "100.00").replace("469.21", "100.00"))
    res = run_cli("validate", "--nccl", "--from-log", str(low), "--sku", H100, COLUMNS="")
    assert res.returncode == 1, res.stderr
    (reason,) = [x for x in res.stdout.splitlines() if "below the floor" in x]
    assert reason.startswith("2-node: busbw ") and reason.endswith(")")  # whole, not centred


def test_from_log_without_sku_asks_for_what_from_log_takes() -> None:
    res = run_cli("validate", "--nccl", "--from-log", str(H100_LOG))
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert "--sku SKU" in line and "--fail-below" in line
    assert "in the stack" not in line  # -s is refused with --from-log


def test_a_history_that_cannot_be_written_is_refused_before_the_verdict(tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    res = run_cli("validate", "--nccl", "--from-log", str(H100_LOG), "--sku", H100,
                  "--record", "azure-h100",
                  GPU_CLUSTERS_VALIDATE_HISTORY=str(blocker / "h.sqlite"))  # fmt: skip
    assert res.returncode == 2
    assert "NCCL validation" not in res.stdout  # no "pass (exit 0)" before an exit 2
    (line,) = error_lines(res.stderr)
    assert "validation history" in line and str(blocker) in line
