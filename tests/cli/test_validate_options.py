"""`clusterctl validate`: what each mode takes, and one clear line (exit 2) for what it does not."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import H100, H100_LOG, NCCL_DATA, error_lines


def test_from_log_reads_the_node_count_from_the_rank_lines(cli) -> None:
    res = cli("validate", "--nccl", "--from-log", str(H100_LOG), "--sku", H100, "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["status"] == "pass"
    assert doc["groups"][0]["group"] == "2-node"
    assert doc["groups"][0]["hosts"] == ["bm-h100-01", "bm-h100-02"]


def test_from_log_without_rank_lines_asks_for_nodes(cli) -> None:
    log = NCCL_DATA / "aks_rdma_ib_a100_2node_na.txt"  # no `# Rank` lines
    res = cli("validate", "--nccl", "--from-log", str(log), "--sku", "Standard_ND96asr_v4")
    assert res.exit_code == 2
    lines = error_lines(res.stderr)
    assert len(lines) == 1 and "names no hosts" in lines[0] and "--nodes N" in lines[0]
    res = cli("validate", "--nccl", "--from-log", str(log), "--sku", "Standard_ND96asr_v4",
              "--nodes", "2")  # fmt: skip
    assert res.exit_code == 0, res.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--from-log", str(H100_LOG), "--sweep"), "--sweep does nothing with --from-log"),
        (("--from-log", str(H100_LOG), "--drain"), "--drain does nothing with --from-log"),
        (("--from-log", str(H100_LOG), "--partition", "gpu"), "--partition does nothing with"),
        (("--from-log", str(H100_LOG), "-e", "1G"), "-e/--max-bytes does nothing with --from-log"),
        (("--sandbox", "--sku", H100), "--sku does nothing with --sandbox"),
        (("--sandbox-dir", "/nonexistent", "--sweep"), "--sweep does nothing with --sandbox"),
        (("--kubeconfig", "k", "--partition", "gpu"), "--partition does nothing with --kubeconfig"),
        (("-s", "azure-h100", "--sku", H100), "--sku does nothing with -s/--stack"),
        (("--host", "h", "--kubeconfig", "k"), "use only one of --host, --kubeconfig"),
        (("--host", "h", "--from-log", str(H100_LOG)), "use only one of --host, --from-log"),
        (("--sandbox", "--host", "h"), "use only one of --host, --sandbox"),
        ((), "say where to validate"),
    ],
)
def test_options_a_mode_ignores_are_refused(cli, args, words) -> None:
    res = cli("validate", "--nccl", *args)
    assert res.exit_code == 2, res.stdout
    lines = error_lines(res.stderr)
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], lines


def test_sandbox_takes_no_value_and_defaults_to_the_running_one(cli, tmp_path, monkeypatch):
    import clusterctl.project

    monkeypatch.setattr(clusterctl.project, "VM_WORKDIR", tmp_path / "default")
    res = cli("validate", "--nccl", "--sandbox")
    assert res.exit_code == 2
    lines = error_lines(res.stderr)
    assert len(lines) == 1 and f"no sandbox running in {tmp_path / 'default'}" in lines[0]

    res = cli("validate", "--nccl", "--sandbox-dir", str(tmp_path / "other"))
    assert res.exit_code == 2 and f"no sandbox running in {tmp_path / 'other'}" in res.stderr

    res = cli("validate", "--nccl", "--sandbox", str(tmp_path))  # the old form: a value
    assert res.exit_code == 2 and "unexpected extra argument" in res.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("-b", "lots"), "-b/--min-bytes: 'lots' is not a size like 8, 64K, 1M, 1.5G, 16GiB"),
        (("-e", "1.3K"), "-e/--max-bytes: '1.3K' is not a whole number of bytes"),
        (("-b", "2G", "-e", "1GiB"), "-b/--min-bytes 2G is above -e/--max-bytes 1GiB"),
    ],
)
def test_sizes_refused_with_one_line(cli, args, words) -> None:
    res = cli("validate", "--nccl", "--host", "h", "--nodes", "2", *args)
    assert res.exit_code == 2
    lines = error_lines(res.stderr)
    assert len(lines) == 1 and words in lines[0], lines


def test_sizes_are_respelt_for_nccl_tests() -> None:
    from clusterctl.cli import validate as cli_validate

    assert cli_validate.sizes("1.5G", "16GiB") == ("1536M", "16G")
    assert cli_validate.sizes(None, "17179869184") == (None, "16G")


def test_help_documents_sizes_and_shows_no_bool_metavar(cli) -> None:
    res = cli("validate", "--help")
    assert res.exit_code == 0
    assert "<bool>" not in res.stdout
    assert "[user@]host[:port]" in res.stdout  # help text is not read as rich markup
    for flag in ("-b, --min-bytes", "-e, --max-bytes"):
        line = next(line for line in res.stdout.splitlines() if flag in line)
        assert "message size" in line
    assert "1024-based" in res.stdout
    from clusterctl.project import VM_WORKDIR

    assert str(VM_WORKDIR) in "".join(res.stdout.split())  # --sandbox-dir's default


@pytest.mark.parametrize(
    "argv", [(), ("plan",), ("catalog",), ("schema",), ("up",), ("down",), ("sandbox", "up")]
)
def test_no_bool_metavars_anywhere(cli, argv) -> None:
    res = cli(*argv, "--help")
    assert res.exit_code == 0, res.stderr
    assert "<bool>" not in res.stdout
