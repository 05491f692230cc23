"""The validation history compares a run only with runs of its kind (same VM size, same node
count), shows both in its table, and keeps only runs that belong to the stack they are kept
under; a log whose GPUs are not the --sku's is refused, naming both."""

from __future__ import annotations

from clusterctl.validate.history import History
from tests.cli.conftest import H100, H100_LOG, error_lines

A100 = "Standard_ND96amsr_A100_v4"  # the azure-a100 stack's


def _result(busbw: float) -> dict:
    size = {"size_bytes": 1 << 34, "busbw_out_of_place_gbps": busbw, "busbw_in_place_gbps": busbw,
            "gated": True, "floor_gbps": 300.0}  # fmt: skip
    group = {"group": "gpu", "measured_busbw_gbps": busbw, "margin_pct": 1.0, "sizes": [size]}
    return {"status": "pass", "groups": [group]}


def _keep(path, sku: str, nodes: int, busbw: float) -> None:
    History(path).record("azure-h100", _result(busbw), at="2026-11-01T00:00:00", source="run",
                         sku=sku, nodes=nodes, network="IB", nccl_version=None)  # fmt: skip


def test_history_compares_each_run_with_the_first_accepted_of_its_kind(
    cli, _validation_history
) -> None:
    _keep(_validation_history, H100, 2, 400.0)  # 2-node, over the fabric
    _keep(_validation_history, H100, 1, 480.0)  # 1-node: NVLink, not comparable with the above
    _keep(_validation_history, H100, 2, 380.0)
    _keep(_validation_history, A100, 2, 190.0)  # another VM size: its own baseline
    res = cli("validate", "history", "-s", "azure-h100")
    assert res.exit_code == 0, res.output
    header = next(line for line in res.stdout.splitlines() if "busbw" in line)
    assert "SKU" in header and "nodes" in header
    rows = [line for line in res.stdout.splitlines() if line.startswith("│") and "│ #" not in line]
    rows = [r for r in rows if r.split("│")[1].strip().isdigit()]
    assert len(rows) == 4, res.stdout
    assert "first accepted" in rows[0]
    assert "first accepted" in rows[1] and "+20.0%" not in rows[1]
    assert "-5.0%" in rows[2]
    assert "first accepted" in rows[3] and "-52.5%" not in rows[3]
    assert H100 in rows[0] and A100 in rows[3]


def test_the_report_compares_with_the_first_accepted_run_of_its_kind(
    cli, _validation_history, tmp_path
) -> None:
    _keep(_validation_history, H100, 1, 480.0)  # a 1-node run came first
    page = tmp_path / "r.html"
    res = cli("validate", "--nccl", "--from-log", str(H100_LOG), "--sku", H100,
              "--record", "azure-h100", "--report", str(page))  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "Run #1 of stack" not in page.read_text()  # the 1-node run is no reference


def test_record_refuses_a_stack_that_does_not_exist(cli, _validation_history) -> None:
    res = cli("validate", "--nccl", "--from-log", str(H100_LOG), "--sku", H100,
              "--record", "azure-h10")  # fmt: skip
    assert res.exit_code == 2, res.output
    (line,) = error_lines(res.stderr)
    assert "azure-h10" in line and "azure-h100" in line  # the stacks there are named
    assert History(_validation_history).runs("azure-h10") == []


def test_record_refuses_a_run_of_another_vm_size_than_the_stacks(cli, _validation_history):
    res = cli("validate", "--nccl", "--from-log", str(H100_LOG), "--sku", H100,
              "--record", "azure-a100")  # fmt: skip
    assert res.exit_code == 2, res.output
    (line,) = error_lines(res.stderr)
    assert f"--record azure-a100: the stack runs {A100}, not --sku {H100}" in line
    assert History(_validation_history).runs("azure-a100") == []


def test_history_of_a_misspelt_stack_is_an_error_not_an_empty_history(cli) -> None:
    res = cli("validate", "history", "-s", "azure-h10")
    assert res.exit_code == 2, res.output
    (line,) = error_lines(res.stderr)
    assert "no file Pulumi.azure-h10.yaml" in line


def test_a_log_of_other_gpus_than_the_skus_says_so(cli, tmp_path) -> None:
    a100_log = tmp_path / "a100.txt"
    a100_log.write_text(
        H100_LOG.read_text().replace("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB")
    )
    res = cli("validate", "--nccl", "--from-log", str(a100_log), "--sku", H100)
    assert res.exit_code == 2, res.output
    (line,) = error_lines(res.stderr)
    assert "NVIDIA A100-SXM4-80GB" in line and f"--sku {H100} has H100 GPUs" in line
    assert "Standard_ND96asr_v4" in line  # a SKU that has those GPUs is suggested
    ok = cli("validate", "--nccl", "--from-log", str(H100_LOG), "--sku", H100)
    assert ok.exit_code == 0, ok.output
