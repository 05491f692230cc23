"""`validate --nccl --report PATH`, `--record STACK` and `validate history -s STACK`."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.cli.conftest import H100, NCCL_DATA, error_lines, run_cli

IB = NCCL_DATA / "derived_azure_ib_gdr.txt"
SOCKET = NCCL_DATA / "derived_azure_socket_fallback.txt"


def judge(cli, log, *extra: str):
    return cli("validate", "--nccl", "--from-log", str(log), "--sku", H100, *extra)


@pytest.mark.parametrize("suffix", [".html", ".png", ".svg"])
def test_report_is_written_beside_the_verdict(cli, tmp_path, suffix) -> None:
    path = tmp_path / "deep" / f"acceptance{suffix}"
    res = judge(cli, SOCKET, "--report", str(path))
    assert res.exit_code == 1, res.stderr  # the verdict's exit code, report or not
    assert "NCCL validation: fail" in res.stdout
    assert f"report: {path}" in res.stderr
    data = path.read_bytes()
    head = {".html": b"<!DOCTYPE html>", ".png": b"\x89PNG", ".svg": b"<?xml"}[suffix]
    assert data.startswith(head)


def test_report_with_json_keeps_stdout_one_document(cli, tmp_path) -> None:
    path = tmp_path / "r.html"
    res = judge(cli, IB, "--report", str(path), "--json")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["status"] == "pass"
    assert "<title>NCCL acceptance: PASS" in path.read_text()


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("report.pdf", "--report {path}: say which kind by its suffix: .html"),
        ("report", "--report {path}: say which kind by its suffix"),
        ("under-a-file", None),
    ],
)
def test_a_bad_report_path_is_refused_before_the_run(cli, tmp_path, name, words) -> None:
    path = tmp_path / name
    if words is None:  # a folder that cannot be created: a file stands where it would be
        (tmp_path / "blocker").write_text("")
        path = tmp_path / "blocker" / "r.html"
        words = "--report"
    res = judge(cli, IB, "--report", str(path))
    assert res.exit_code == 2
    (line,) = error_lines(res.stderr)
    assert line.startswith("error: ") and words.format(path=path) in line
    assert "Traceback" not in res.stderr and "NCCL validation" not in res.stdout


def test_record_keeps_a_log_run_and_history_prints_the_trend(cli, _validation_history) -> None:
    assert judge(cli, IB, "--record", "azure-h100").exit_code == 0
    assert judge(cli, SOCKET, "--record", "azure-h100").exit_code == 1
    assert judge(cli, IB, "--record", "aks-h100").exit_code == 0
    assert judge(cli, IB).exit_code == 0  # no stack named: nothing kept
    rows = (
        sqlite3.connect(_validation_history)
        .execute("SELECT stack, status, busbw_gbps, network FROM runs ORDER BY id")
        .fetchall()
    )
    assert rows == [
        ("azure-h100", "pass", 469.1, "IB/GDRDMA"),
        ("azure-h100", "fail", 4.69, "Socket"),
        ("aks-h100", "pass", 469.1, "IB/GDRDMA"),
    ]
    # piped (no COLUMNS): each run is one line, however wide the table
    res = run_cli("validate", "history", "-s", "azure-h100", COLUMNS="")
    assert res.returncode == 0, res.stderr
    lines = [line for line in res.stdout.splitlines() if line.startswith("│")]
    assert len(lines) == 2
    assert "pass" in lines[0] and "469.10" in lines[0] and "first accepted" in lines[0]
    assert "fail" in lines[1] and "4.69" in lines[1] and "-99.0%" in lines[1]
    assert "derived_azure_socket_fallback.txt" in lines[1] and "Socket" in lines[1]
    doc = json.loads(cli("validate", "history", "-s", "azure-h100", "--json").stdout)
    assert doc["file"] == str(_validation_history)
    assert [(r["id"], r["status"]) for r in doc["runs"]] == [(1, "pass"), (2, "fail")]


def test_the_report_compares_with_the_stacks_first_accepted_run(cli, tmp_path) -> None:
    judge(cli, IB, "--record", "azure-h100")
    path = tmp_path / "r.html"
    judge(cli, SOCKET, "--record", "azure-h100", "--report", str(path))
    page = path.read_text()
    assert "Run #1 of stack azure-h100" in page and "-99.0%" in page


def test_history_of_a_stack_with_no_runs(cli) -> None:
    res = cli("validate", "history", "-s", "azure-h100")
    assert res.exit_code == 0 and "no validation runs kept for stack azure-h100" in res.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("validate", "history"), "-s/--stack: no stack given; pass -s STACK"),
        (("validate", "--nccl", "-s", "a", "--record", "b"), "--record b with -s a"),
    ],
)
def test_history_input_errors_are_one_line(cli, args, words) -> None:
    res = cli(*args)
    assert res.exit_code == 2
    (line,) = error_lines(res.stderr)
    assert words in line


def test_a_damaged_history_file_is_one_line_after_the_verdict(cli, _validation_history) -> None:
    _validation_history.write_text("not a database\n" * 50)
    res = judge(cli, IB, "--record", "azure-h100")
    assert res.exit_code == 2 and "NCCL validation: pass" in res.stdout
    (line,) = error_lines(res.stderr)
    assert "validation history" in line and "file is not a database" in line


def test_history_defaults_to_the_projects_clusterctl_folder(tmp_path) -> None:
    proj = tmp_path / "proj"
    init = run_cli("init", "--example", "azure-h100", str(proj), GPU_CLUSTERS_VALIDATE_HISTORY="")
    assert init.returncode == 0, init.stderr
    res = run_cli("validate", "--nccl", "--from-log", str(IB), "--sku", H100,
                  "--record", "azure-h100", cwd=proj, GPU_CLUSTERS_VALIDATE_HISTORY="")  # fmt: skip
    assert res.returncode == 0, res.stderr
    where = proj / ".clusterctl" / "validate-history.sqlite"
    assert f"kept as run #1 of stack azure-h100 in {where}" in " ".join(res.stderr.split())
    assert where.is_file()


def test_a_stack_run_is_kept_and_its_report_names_the_benchmark_command(
    tmp_path, _validation_history
) -> None:
    from tests.cli.test_validate_kubernetes import Cluster

    cluster = Cluster(tmp_path, "aws-p5")
    report = tmp_path / "aws-p5.html"
    proc = cluster.run(["validate", "--nccl", "-s", "aws-p5", "--report", str(report)])
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    (row,) = sqlite3.connect(_validation_history).execute("SELECT stack, source FROM runs")
    assert row == ("aws-p5", "run")
    page = report.read_text()
    assert "stack aws-p5" in page
    command = page[page.index("benchmark command") :]
    assert "all_reduce_perf" in command and "-x NCCL_DEBUG" in command
