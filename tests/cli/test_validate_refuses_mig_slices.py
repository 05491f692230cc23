"""`validate --nccl` refuses, in one line and before reaching any cluster, a node pool or
partition cut into MIG slices or shared by time-slicing: NCCL on shared GPUs is not a bandwidth
acceptance test."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import error_lines, run_cli


def _project(tmp_path: Path, example: str, sharing: dict) -> Path:
    proj = tmp_path / "p"
    made = run_cli("init", "--example", example, str(proj), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    path = proj / "stacks" / f"Pulumi.{example}.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["config"]["gpu-clusters:cluster"]["partitions"][0]["sharing"] = sharing
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return proj


@pytest.mark.parametrize(
    ("example", "group"), [("aks-h100", "node pool gpu"), ("azure-h100", "partition gpu")]
)
def test_nccl_on_a_mig_pool_is_one_line_exit_2(tmp_path: Path, example: str, group: str) -> None:
    proj = _project(tmp_path, example, {"mig": {"1g.10gb": 7}})
    res = run_cli("validate", "--nccl", "-s", example, cwd=proj)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = error_lines(res.stderr)
    assert line.startswith("error: ") and "partitions[0].sharing.mig" in line, line
    assert f"{group} is cut into MIG slices" in line
    assert "not a bandwidth acceptance test" in line


def test_nccl_on_a_time_sliced_node_pool_is_one_line_exit_2(tmp_path: Path) -> None:
    """Time-sliced replicas of one request may be the same GPU: NCCL stops on a duplicate GPU
    or measures GPUs other jobs share. Before, only MIG was refused."""
    proj = _project(tmp_path, "aks-h100", {"shards": 4})
    res = run_cli("validate", "--nccl", "-s", "aks-h100", cwd=proj)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = error_lines(res.stderr)
    assert line.startswith("error: ") and "partitions[0].sharing.shards" in line, line
    assert "node pool gpu shares its GPUs by time-slicing" in line
    assert "MIG slices" not in line


def test_a_slurm_partition_with_shards_is_validated_on_whole_gpus(tmp_path: Path) -> None:
    """Slurm's gres/shard sits beside gres/gpu: the NCCL job's `--gres=gpu:8` gets whole GPUs."""
    proj = _project(tmp_path, "azure-h100", {"shards": 4})
    res = run_cli("validate", "--nccl", "-s", "azure-h100", cwd=proj)
    assert "sharing" not in res.stderr + res.stdout, res.stderr
