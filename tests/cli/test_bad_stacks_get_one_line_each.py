"""Bad stacks, and three classes of them that used to slip through: each is one `error:` line per
problem naming the field and the fix, exit 2, never an internal error.

- an AWS address space too small for the nodes it must hold,
- partitions spread over more zones than the VPC program has subnets for (was an IndexError),
- a provider setting (aws:region, azure-native:location) contradicting the cluster's own, or
  aws:region missing (the default AWS provider then builds wherever the environment says).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.conftest import ROOT, error_lines, run_cli


def project_with(tmp_path: Path, example: str, edit) -> Path:
    proj = tmp_path / "p"
    assert run_cli("init", "--example", example, str(proj)).returncode == 0
    stack = proj / "stacks" / f"Pulumi.{example}.yaml"
    stack.write_text(edit(stack.read_text()))
    return proj


def errors_of(proj: Path, example: str) -> list[str]:
    got = run_cli("plan", "-s", example, cwd=proj)
    assert got.returncode == 2, (got.returncode, got.stderr[-2000:])
    assert "internal error" not in got.stderr and "Traceback" not in got.stderr
    lines = error_lines(got.stderr)
    assert all(line.startswith("error: ") for line in lines), lines
    return lines


def test_aws_region_contradicting_the_cluster_region(tmp_path: Path) -> None:
    proj = project_with(tmp_path, "aws-p5", lambda t: t.replace("us-east-1\n", "us-west-2\n", 1))
    (line,) = errors_of(proj, "aws-p5")
    assert line.startswith("error: aws:region: us-west-2 contradicts gpu-clusters:cluster.region")
    assert "same region" in line


def test_aws_region_missing_is_flagged(tmp_path: Path) -> None:
    proj = project_with(tmp_path, "aws-p5", lambda t: t.replace("  aws:region: us-east-1\n", ""))
    (line,) = errors_of(proj, "aws-p5")
    assert line.startswith("error: aws:region: is not set") and "aws:region: us-east-1" in line


@pytest.mark.parametrize("example", ["azure-h100", "aks-h100"])
def test_azure_location_contradicting_the_cluster_region(tmp_path: Path, example: str) -> None:
    old, new = "azure-native:location: eastus", "azure-native:location: westeurope"
    proj = project_with(tmp_path, example, lambda t: t.replace(old, new))
    (line,) = errors_of(proj, example)
    assert line.startswith("error: azure-native:location: westeurope contradicts")


def test_the_other_clouds_provider_setting_is_refused(tmp_path: Path) -> None:
    extra = "  aws:region: us-east-1\n  azure-native:location: eastus\n"
    proj = project_with(tmp_path, "aws-p5", lambda t: t.replace("  aws:region: us-east-1\n", extra))
    (line,) = errors_of(proj, "aws-p5")
    assert line.startswith("error: azure-native:location: is a azure setting")


def _partitions(n: int, zone_of) -> str:
    return "".join(
        f"      - name: gpu{i}\n        sku: p5.48xlarge\n        nodes: 1\n"
        f"        zones: [{zone_of(i)}]\n"
        for i in range(n)
    )


def _replace_partitions(text: str, block: str) -> str:
    return re.sub(
        r"    partitions:\n(?:      .*\n|        .*\n)+", "    partitions:\n" + block, text
    )


def test_partitions_in_more_zones_than_the_vpc_has_subnets_for(tmp_path: Path) -> None:
    zones = "abcdef"
    proj = project_with(tmp_path, "aws-p5", lambda t: _replace_partitions(
        t, _partitions(6, lambda i: f"us-east-1{zones[i]}")))  # fmt: skip
    lines = errors_of(proj, "aws-p5")
    assert len(lines) == 2, lines
    assert lines[0].startswith("error: gpu-clusters:cluster.partitions[4].zones: ")
    assert lines[1].startswith("error: gpu-clusters:cluster.partitions[5].zones: ")
    assert all("at most 4" in line for line in lines)


def test_an_aws_address_space_too_small_for_its_nodes(tmp_path: Path) -> None:
    proj = project_with(tmp_path, "aws-p5", lambda t: t.replace(
        "addressSpace: 10.40.0.0/16", "addressSpace: 10.40.0.0/22").replace(
        "nodes: 2\n", "nodes: 300\n"))  # fmt: skip
    (line,) = errors_of(proj, "aws-p5")
    assert line.startswith("error: gpu-clusters:cluster.network.addressSpace: 302 nodes in")
    assert "larger addressSpace" in line


def test_the_shipped_stacks_still_plan() -> None:
    for stack in ("aws-p5", "azure-h100", "aks-h100"):
        got = run_cli("plan", "-s", stack, "--json", cwd=ROOT)
        assert got.returncode == 0, got.stderr
