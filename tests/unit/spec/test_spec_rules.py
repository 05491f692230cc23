"""Bad stack input: one line per problem naming the field, exit 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from clusterctl.errors import SpecError
from clusterctl.spec.load import load_stack_spec


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("override", "field", "words"),
    [
        (
            "partitions[0].sku=Standard_ND96isr_H10_v5",
            "gpu-clusters:cluster.partitions[0].sku",
            "did you mean 'Standard_ND96isr_H100_v5'",
        ),
        (
            "partitions[0].nodse=4",
            "gpu-clusters:cluster.partitions[0].nodse",
            "did you mean 'nodes'",
        ),
        (
            "network.computeSubnet=10.40.0.0/20",
            "gpu-clusters:cluster.network.computeSubnet",
            "overlaps",
        ),
        (
            "ssh.allowedCidrs[0]=0.0.0.0/0",
            "gpu-clusters:cluster.ssh.allowedCidrs[0]",
            "allowWorldOpen",
        ),
        ("partitions[0].fabric=efa", "gpu-clusters:cluster.partitions[0].fabric", "has infiniband"),
        ("partitions[0].nodes=0", "gpu-clusters:cluster.partitions[0].nodes", "greater than"),
        ("network.addressSpace=10.40.0.1/16", "gpu-clusters:cluster.network.addressSpace", "CIDR"),
        ("cloud=gcp", "gpu-clusters:cluster.cloud", "is not one of azure, aws"),
        ("partitions[0].sku=p5.48xlarge", "gpu-clusters:cluster.partitions[0].sku", "aws type"),
        ("validation.nccl.maxBytes=lots", "gpu-clusters:cluster.validation.nccl.maxBytes", "size"),
        ("validation.nccl.maxBytes=1.3K", "gpu-clusters:cluster.validation.nccl.maxBytes", "whole"),
        (
            "validation.nccl.minBytes=32GiB",
            "gpu-clusters:cluster.validation.nccl.minBytes",
            "above maxBytes (16G)",
        ),
    ],
)
def test_each_rule_names_the_field(override: str, field: str, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_stack_spec("azure-h100", [override])
    lines = caught.value.problems
    assert any(line.startswith(field + ":") and words in line for line in lines), lines


def test_cli_exits_2_with_one_line_per_problem_and_no_traceback() -> None:
    result = run_cli(
        "plan",
        "-s",
        "azure-h100",
        "--set",
        "partitions[0].sku=Standard_ND96isr_H10_v5",
        "--set",
        "ssh.allowedCidrs[0]=0.0.0.0/0",
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 2, result.stderr
    assert "partitions[0].sku" in errors[0] and "ssh.allowedCidrs[0]" in errors[1]


def test_typo_in_config_key_is_an_error(tmp_path, monkeypatch) -> None:
    from clusterctl.errors import UserError
    from clusterctl.spec import stackfile

    (tmp_path / "Pulumi.x.yaml").write_text("config:\n  gpu-clusters:clsuter: {}\n")
    with pytest.raises(UserError) as caught:
        stackfile.read_stack_config("x", tmp_path)
    assert "gpu-clusters:clsuter" in caught.value.problems[0]
    assert "did you mean 'gpu-clusters:cluster'" in caught.value.problems[0]


def test_unknown_stack_lists_the_known_ones() -> None:
    result = run_cli("plan", "-s", "nope")
    assert result.returncode == 2
    assert "azure-h100" in result.stderr and "Traceback" not in result.stderr


def test_sizes_are_respelt_for_nccl_tests() -> None:
    spec, _ = load_stack_spec(
        "azure-h100", ["validation.nccl.minBytes=1.5G", "validation.nccl.maxBytes=16GiB"]
    )
    assert (spec.validation.nccl.min_bytes, spec.validation.nccl.max_bytes) == ("1536M", "16G")


def test_world_open_ssh_accepted_only_when_explicit() -> None:
    spec, findings = load_stack_spec(
        "azure-h100", ["ssh.allowedCidrs[0]=0.0.0.0/0", "ssh.allowWorldOpen=true"]
    )
    assert spec.ssh.allowed_cidrs == ("0.0.0.0/0",)
    assert any(f.level == "warning" and "whole internet" in f.message for f in findings)


def test_documentation_range_is_a_warning_not_an_error() -> None:
    _, findings = load_stack_spec("azure-h100")
    assert any("RFC 5737" in f.message and f.level == "warning" for f in findings)
