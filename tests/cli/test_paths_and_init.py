"""`init` never overwrites without --force, and a path the system refuses
(--out, init's folder, schema --out, --junit, a non-UTF-8 stack) is one line naming the path and
the fix, exit 2: never `internal error` or a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import error_lines, run_cli


def assert_one_error(proc, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error:") and "internal error" not in lines[0], lines[0]
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_init_refuses_to_overwrite_each_file_without_force(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    (proj / "stacks").mkdir(parents=True)
    (proj / "__main__.py").write_text("# mine\n")
    (proj / "stacks" / "Pulumi.azure-h100.yaml").write_text("# my edits\n")

    got = run_cli("init", "--example", "azure-h100", str(proj), cwd=tmp_path)
    assert got.returncode == 2, got.stderr
    lines = error_lines(got.stderr)
    assert len(lines) == 2 and all("--force" in line for line in lines), got.stderr
    assert (proj / "__main__.py").read_text() == "# mine\n"
    assert (proj / "stacks" / "Pulumi.azure-h100.yaml").read_text() == "# my edits\n"

    forced = run_cli("init", "--example", "azure-h100", str(proj), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (proj / "__main__.py").read_text() != "# mine\n"


def test_init_into_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    assert_one_error(run_cli("init", "--example", "azure-h100", str(tmp_path / "afile" / "p"),
                      cwd=tmp_path), str(tmp_path / "afile"), "not a folder")  # fmt: skip


@pytest.mark.parametrize("where", ["file", "under-a-file"])
def test_plan_out_is_checked_before_planning(tmp_path: Path, where: str) -> None:
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" if where == "file" else tmp_path / "afile" / "sub"
    # an unknown stack would be the error if the plan ran first
    line = assert_one_error(run_cli("plan", "-s", "no-such-stack", "--out", str(out)), "--out")
    assert str(tmp_path / "afile") in line


def test_schema_out_to_a_folder_is_one_line(tmp_path: Path) -> None:
    assert_one_error(run_cli("schema", "--out", str(tmp_path)), "--out", str(tmp_path), "folder")


def test_a_non_utf8_stack_file_is_one_line(tmp_path: Path) -> None:
    assert run_cli("init", "--example", "azure-h100", str(tmp_path / "p")).returncode == 0
    (tmp_path / "p" / "stacks" / "Pulumi.latin1.yaml").write_bytes(
        b"# caf\xe9\nconfig:\n  gpu-clusters:cluster: {}\n"
    )
    assert_one_error(
        run_cli("plan", "-s", "latin1", cwd=tmp_path / "p"), "Pulumi.latin1.yaml", "UTF-8"
    )


def test_an_unexpected_path_error_is_one_line_not_an_internal_error(tmp_path: Path) -> None:
    # GPU_CLUSTERS_CONFIG_DIR naming a file: the catalog read fails with NotADirectoryError
    (tmp_path / "afile").write_text("x")
    got = run_cli("catalog", GPU_CLUSTERS_CONFIG_DIR=str(tmp_path / "afile"))
    assert_one_error(got, str(tmp_path / "afile"))


def test_a_bad_junit_path_is_refused_before_the_run(tmp_path: Path) -> None:
    from tests.cli.conftest import H100_LOG

    got = run_cli("validate", "--nccl", "--from-log", str(H100_LOG), "--sku",
                  "Standard_ND96isr_H100_v5", "--junit", str(tmp_path))  # fmt: skip
    assert_one_error(got, "--junit", str(tmp_path))


def test_a_junit_file_that_cannot_be_written_keeps_the_verdict(tmp_path: Path, capsys) -> None:
    import typer

    from clusterctl.cli.report import report
    from clusterctl.nccl.judge import Thresholds, judge
    from clusterctl.nccl.parse import parse_all_reduce
    from clusterctl.validate.run import Outcome
    from tests.cli.conftest import H100_LOG

    verdict = judge(parse_all_reduce(H100_LOG.read_text()), Thresholds(300.0, None, 1 << 34, "x"))
    (tmp_path / "afile").write_text("x")
    with pytest.raises(typer.Exit) as ended:
        report(Outcome([verdict], None), as_json=False, junit=tmp_path / "afile" / "r.xml")
    assert ended.value.exit_code == 2
    captured = capsys.readouterr()
    assert "NCCL validation: pass" in captured.out
    assert "--junit" in captured.err and str(tmp_path / "afile") in captured.err
