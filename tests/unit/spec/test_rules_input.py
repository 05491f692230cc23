"""Values the cloud or Slurm would reject at deploy time are refused at plan time, each with the
field as written and what to write instead."""

from __future__ import annotations

import base64
import struct

import pytest

from clusterctl.errors import SpecError
from clusterctl.spec.load import load_stack_spec


def _key(kind: str, inner: str | None = None) -> str:
    blob = struct.pack(">I", len(inner or kind)) + (inner or kind).encode() + b"\0" * 32
    return f"{kind} {base64.b64encode(blob).decode()} me@host"


def assert_refused(stack: str, overrides: list[str], field: str, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_stack_spec(stack, overrides)
    lines = caught.value.problems
    assert any(
        line.startswith(f"gpu-clusters:cluster.{field}:") and words in line for line in lines
    ), lines


@pytest.mark.parametrize(
    ("stack", "override", "field", "words"),
    [
        ("azure-a100", "region=westeuropa", "region", "did you mean 'westeurope'"),
        ("azure-a100", "region=eu-west-1", "region", "is an AWS region"),
        ("aws-p5", "region=northeurope", "region", "is an Azure region"),
        ("aws-p5", "partitions[0].zones=[eu-west-1b]", "partitions[0].zones[0]", "of us-"),
        ("azure-a100", "storage.sizeGib=40000", "storage.sizeGib", "Premium SSD"),
        ("azure-a100", "storage.kind=none", "storage.kind", "shared by every node"),
        ("azure-h100", "partitions[0].fabric=none", "partitions[0].fabric", "always uses"),
        ("azure-a100", "tags={Windows-build: x}", "tags.Windows-build", "Azure reserves"),
        ("azure-a100", "tags={team/ml: x}", "tags.team/ml", "may not contain /"),
        ("aws-p5", "tags={aws:owner: me}", "tags.aws:owner", "AWS reserves"),
        ("aws-p5", "tags={owner: 'a#b'}", "tags.owner", "letters, digits"),
        ("azure-a100", "tags={gpu-clusters:cluster: other}", "tags.gpu-clusters:cluster", "own"),
        ("azure-a100", f"tags={{k: {'v' * 257}}}", "tags.k", "at most 256"),
        ("azure-a100", "ssh.adminUser=guest", "ssh.adminUser", "Azure refuses 'guest'"),
        ("azure-a100", "partitions[0].name=default", "partitions[0].name", "reserves"),
        (
            "aws-p5",
            "partitions[0].capacityReservationId=cr-12",
            "partitions[0].capacityReservationId",
            "not a",
        ),
        ("aws-p5", "partitions[0].image=ubuntu-22.04", "partitions[0].image", "ami-"),
        ("azure-a100", "partitions[0].image=Canonical:ubuntu", "partitions[0].image", "URN"),
        ("azure-a100", "network.addressSpace=2001:db8::/56", "network.addressSpace", "IPv6"),
        ("azure-a100", "network.computeSubnet=10.40.128.0/30", "network.computeSubnet", "fit"),
        ("azure-a100", "kubernetes.systemNodes=3", "kubernetes", "no effect"),
        ("aks-h100", "headNode.accounting=true", "headNode.accounting", "no effect"),
        ("aks-h100", "storage.kind=none", "storage", "no effect"),
        ("aws-p5", "healthChecks.deepIntervalHours=6", "healthChecks", "no effect"),
        (
            "azure-h100",
            "healthChecks.deepIntervalHours=721",
            "healthChecks.deepIntervalHours",
            "720",
        ),
        ("azure-a100", f"ssh.publicKey={_key('ssh-ed25519', 'ssh-rsa')}", "ssh.publicKey", "holds"),
        ("azure-a100", "ssh.publicKey=ssh-rsa !!!! me", "ssh.publicKey", "base64"),
        ("azure-a100", f"ssh.publicKey={_key('ssh-dss')}", "ssh.publicKey", "not ssh-dss"),
        ("azure-h100", "partitions[0].minNodes=3", "partitions[0].minNodes", "at most 2"),
        (
            "azure-h100",
            "partitions[0].idleMinutes=-1",
            "partitions[0].idleMinutes",
            "greater than or equal to 0",
        ),
        ("azure-h100", "partitions[0].idleMinutes=20000", "partitions[0].idleMinutes", "10080"),
        ("aks-h100", "partitions[0].idleMinutes=5", "partitions[0].idleMinutes", "no effect"),
        ("aws-p5", "partitions[0].minNodes=3", "partitions[0].minNodes", "at most 2"),
    ],
)
def test_refused_with_the_field_and_the_fix(stack, override, field, words) -> None:
    assert_refused(stack, [override], field, words)


def test_spot_in_a_capacity_reservation_is_refused() -> None:
    assert_refused(
        "aws-p5",
        ["partitions[0].spot=true", "partitions[0].capacityReservationId=cr-0123456789abcdef0"],
        "partitions[0].spot",
        "cannot run in a capacity reservation",
    )


def test_good_values_pass() -> None:
    spec, _ = load_stack_spec(
        "azure-a100",
        [f"ssh.publicKey={_key('ssh-ed25519')}", "tags={team: ml, cost-center: '42'}"],
    )
    assert spec.tags["team"] == "ml"


@pytest.mark.parametrize(
    "override",
    [
        "partitions[0].nodes=true",
        "storage.sizeGib=false",
        "partitions[0].spot=1",
        "healthChecks.enabled=0",
        "validation.nccl.failBelowGbps=true",
    ],
)
def test_yaml_booleans_are_not_numbers_and_numbers_not_booleans(override: str) -> None:
    field = override.split("=")[0]
    assert_refused("azure-a100", [override], field, "valid")


def test_min_nodes_without_power_saving_is_refused() -> None:
    assert_refused(
        "azure-h100",
        ["partitions[0].idleMinutes=0", "partitions[0].minNodes=1"],
        "partitions[0].minNodes",
        "no effect with idleMinutes: 0",
    )
