"""Every setting the spec accepts does what it says: flipping it changes the plan (resources,
inputs, outputs, cost, findings), the rendered files, or what `clusterctl validate` does. A field
that only another consumer reads names that consumer's test.

A new spec field with no row here fails test_every_field_is_listed.
"""

from __future__ import annotations

import json
import typing

import pytest
from pydantic import BaseModel

from clusterctl.errors import SpecError
from clusterctl.plan.program import make_plan
from clusterctl.spec.model import ClusterSpec
from clusterctl.validate.run import Options, with_stack_overrides

SLURM, EKS, AKS, TEAM = "azure-h100", "aws-p5", "aks-h100", "azure-team"
# field -> (stack, --set value)
FLIPS: dict[str, tuple[str, str]] = {
    "name": (SLURM, "h100b"),
    "region": (SLURM, "westeurope"),
    "ssh.adminUser": (SLURM, "ops"),
    "ssh.publicKey": (
        SLURM,
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHfzWqYVbd3mvBqb8Y7uT7hDyK2oGxPx3lqC5nYh7Zx1 me@h",
    ),
    "ssh.allowedCidrs": (SLURM, "[198.18.0.0/24]"),
    "ssh.allowWorldOpen": (SLURM, "false"),
    "ssh.access": (SLURM, "jumphost"),
    "network.addressSpace": (SLURM, "10.50.0.0/16"),
    "network.schedulerSubnet": (SLURM, "10.40.1.0/24"),
    "network.computeSubnet": (SLURM, "10.40.64.0/18"),
    "headNode.sku": (SLURM, "Standard_D4s_v5"),
    "headNode.accounting": (SLURM, "true"),
    "headNode.image": (
        SLURM,
        "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:22.04.202611010",
    ),
    "partitions[0].name": (SLURM, "train"),
    "partitions[0].sku": (SLURM, "Standard_ND96amsr_A100_v4"),
    "partitions[0].nodes": (SLURM, "3"),
    "partitions[0].spot": (SLURM, "true"),
    "partitions[0].image": (SLURM, "microsoft-dsvm:ubuntu-hpc:2404:latest"),
    "partitions[0].fabric": (SLURM, "none"),
    # the field as written on the second partition: it moves the default there
    "partitions[0].default": (SLURM, "partitions[1].default=true"),
    "partitions[0].zones": (EKS, "[us-east-1b]"),
    "partitions[0].capacityReservationId": (EKS, "cr-0123456789abcdef0"),
    "partitions[0].capacityBlock": (EKS, "true"),
    "partitions[0].idleMinutes": (SLURM, "0"),
    "partitions[0].minNodes": (SLURM, "1"),
    "partitions[0].maxNodesPerScaleSet": (SLURM, "1"),
    "partitions[0].sharing.mig": (SLURM, "{1g.10gb: 7}"),
    "partitions[0].sharing.shards": (SLURM, "4"),
    "storage.kind": (SLURM, "azure-files-nfs"),
    "storage.sizeGib": (SLURM, "2048"),
    "storage.keepOnDestroy": (SLURM, "false"),
    "storage.backup.enabled": (SLURM, "false"),
    "storage.backup.retentionDays": (SLURM, "14"),
    "storage.backup.hourUtc": (SLURM, "5"),
    "storage.lustre.throughputMbpsPerTib": (SLURM, "250"),
    "storage.lustre.sizeTib": (SLURM, "32"),
    "storage.lustre.mountPoint": (SLURM, "/data"),
    "storage.lustre.subnet": (SLURM, "10.40.2.0/24"),
    "storage.lustre.zone": (SLURM, '"2"'),
    "storage.lustre.maintenanceDay": (SLURM, "Monday"),
    "storage.lustre.maintenanceTimeUtc": (SLURM, '"03:30"'),
    "storage.lustre.keepOnDestroy": (SLURM, "false"),
    "healthChecks.enabled": (SLURM, "false"),
    "healthChecks.intervalSeconds": (SLURM, "600"),
    "healthChecks.drainPrefix": (SLURM, "'ours:'"),
    "healthChecks.deepIntervalHours": (SLURM, "0"),
    "validation.nccl.onDeploy": (SLURM, "true"),
    "validation.nccl.minBytes": (SLURM, "1M"),
    "validation.nccl.maxBytes": (SLURM, "8G"),
    "validation.nccl.failBelowGbps": (SLURM, "300"),
    "validation.nccl.warnBelowGbps": (SLURM, "500"),
    "validation.nccl.peerFloor": (SLURM, "0.8"),
    "validation.nccl.containerImage": (SLURM, "nvcr.io/nvidia/pytorch:24.05-py3"),
    "validation.nccl.timeoutMinutes": (SLURM, "45"),
    "kubernetes.version": (AKS, "'1.34'"),
    "kubernetes.gpuDriver": (AKS, "managed"),
    "kubernetes.kueue": (AKS, "true"),
    "kubernetes.dcgmExporter": (EKS, "false"),
    "kubernetes.monitoring": (EKS, "false"),
    "kubernetes.systemNodes": (AKS, "3"),
    "kubernetes.adminPrincipalArns": (EKS, "[arn:aws:iam::123456789012:role/platform/admin]"),
    "kubernetes.privateApiServer": (EKS, "true"),
    "kubernetes.authorization": (AKS, "kubernetes-rbac"),
    "kubernetes.adminGroupObjectIds": (AKS, "[0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0]"),
    "kubernetes.aksTier": (AKS, "free"),
    "kubernetes.sharedFilesystem.kind": (EKS, "lustre"),
    "kubernetes.sharedFilesystem.sizeGib": (EKS, "2400"),
    "kubernetes.sharedFilesystem.throughputMbpsPerTib": (EKS, "250"),
    "kubernetes.sharedFilesystem.keepOnDestroy": (EKS, "false"),
    "tags": (SLURM, "{team: ml}"),
    "loginNodes.count": (TEAM, "2"),
    "loginNodes.sku": (TEAM, "Standard_D4s_v5"),
    "loginNodes.entraIdGroup": (TEAM, "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"),
    "accounts[0].name": (TEAM, "vis"),
    "accounts[0].fairshare": (TEAM, "5"),
    "accounts[0].gpuLimit": (TEAM, "16"),
    "accounts[0].qos": (TEAM, "[debug, normal]"),
    "users[0].name": (TEAM, "amy"),
    "users[0].uid": (TEAM, "20009"),
    "users[0].sshPublicKeys": (
        TEAM,
        "[ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHfzWqYVbd3mvBqb8Y7uT7hDyK2oGxPx3lqC5nYh7Zx1 me@h]",
    ),
    "users[0].account": (TEAM, "language"),
    "users[0].admin": (TEAM, "false"),
    # renaming a QoS an account names is refused: the account names the others only
    "qos[0].name": (TEAM, "qos[1].name=urgent"),
    "qos[0].priority": (TEAM, "50"),
    "qos[0].maxWallMinutes": (TEAM, "600"),
    "qos[0].maxGpusPerUser": (TEAM, "16"),
}
# Fields with no effect a plan can show, and the test that proves what they do.
ELSEWHERE = {
    "cloud": "the cloud picks the program: every stack test (a flip alone is refused by rules)",
    "scheduler": "the scheduler picks the program: every stack test (a flip alone is refused)",
    "validation.nccl.onFailure": "tests/validate/test_hook.py (the hook passes, warns or fails)",
}
# Fields whose effect is to let a value through that is refused without them.
# (Kubernetes RBAC and its admin groups only go together: tests/component/
# test_kubernetes_network_and_access.py shows what the pair builds.)
REFUSED_WITHOUT = {
    "ssh.allowWorldOpen",
    "kubernetes.authorization",
    "kubernetes.adminGroupObjectIds",
}
# Values accepted by the schema but refused on this stack, rather than silently ignored.
REFUSED = {"partitions[0].fabric"}
# Settings a second, combined change needs before the plan may change.
WITH = {
    "ssh.allowWorldOpen": ["ssh.allowedCidrs=[0.0.0.0/0]", "ssh.allowWorldOpen=true"],
    "partitions[0].default": [
        "partitions=[{name: a, sku: Standard_ND96isr_H100_v5, nodes: 1},"
        " {name: b, sku: Standard_ND96isr_H100_v5, nodes: 1}]"
    ],
    "validation.nccl.warnBelowGbps": ["validation.nccl.failBelowGbps=300"],
    "kubernetes.privateApiServer": ["ssh.allowedCidrs=[10.8.0.0/16]"],
    "partitions[0].capacityBlock": ["partitions[0].capacityReservationId=cr-0123456789abcdef0"],
    "accounts[0].name": ["users[0].account=language"],
    "qos[0].name": ["accounts[1].qos=[normal, debug]"],
    **{
        f"storage.lustre.{key}": ["storage.lustre={sizeTib: 16}"]
        for key in (
            "throughputMbpsPerTib",
            "sizeTib",
            "mountPoint",
            "subnet",
            "zone",
            "maintenanceDay",
            "maintenanceTimeUtc",
            "keepOnDestroy",
        )
    },
    **{
        f"kubernetes.sharedFilesystem.{key}": ["kubernetes.sharedFilesystem.kind=lustre"]
        for key in ("sizeGib", "throughputMbpsPerTib", "keepOnDestroy")
    },
}
VALIDATE_FIELDS = {
    k for k in FLIPS if k.startswith("validation.nccl.") and k != "validation.nccl.onDeploy"
}


def leaf_fields(model: type[BaseModel] = ClusterSpec, prefix: str = "") -> list[str]:
    out = []
    for name, f in model.model_fields.items():
        alias = f.alias or name
        sub = next(
            (
                c
                for a in (f.annotation, *typing.get_args(f.annotation))
                for c in (a, *typing.get_args(a))
                if isinstance(c, type) and issubclass(c, BaseModel)
            ),
            None,
        )
        if sub is None:
            out.append(prefix + alias)
        else:
            many = "tuple" in str(f.annotation)
            out += leaf_fields(sub, f"{prefix}{alias}{'[0].' if many else '.'}")
    return out


def test_every_field_is_listed() -> None:
    missing = set(leaf_fields()) - set(FLIPS) - set(ELSEWHERE)
    assert not missing, f"spec fields with no effect test: {sorted(missing)}"


def _fingerprint(stack: str, overrides: list[str]) -> str:
    plan = make_plan(stack, overrides)
    doc = plan.as_json()
    doc["resources"] = sorted(doc["resources"], key=lambda r: (r["type"], r["name"]))
    doc["files"] = plan.files
    opts = with_stack_overrides(Options(), plan.spec.validation.nccl, "here")
    doc["validate"] = repr({k: v for k, v in vars(opts).items() if k != "say"})
    return json.dumps(doc, sort_keys=True, default=str)


@pytest.mark.parametrize("field", sorted(FLIPS))
def test_flipping_a_field_changes_what_it_should(field: str) -> None:
    stack, value = FLIPS[field]
    flip = value if "=" in value else f"{field}={value}"
    base = WITH.get(field, [])
    before = _fingerprint(stack, base)
    if field in REFUSED_WITHOUT or field in REFUSED:
        with pytest.raises(SpecError):
            _fingerprint(stack, [*base, flip])
        return
    after = _fingerprint(stack, [*base, flip])
    assert before != after, f"{flip} changed nothing on {stack}"


@pytest.mark.parametrize("stack", [EKS, AKS])
@pytest.mark.parametrize("value", ["{mig: {1g.10gb: 7}}", "{shards: 4}"])
def test_sharing_changes_a_kubernetes_plan_too(stack: str, value: str) -> None:
    """partitions[].sharing's rows above flip it on Slurm; a node pool's GPUs share too."""
    assert _fingerprint(stack, []) != _fingerprint(stack, [f"partitions[0].sharing={value}"])


def test_the_fingerprint_is_stable() -> None:
    """Else every flip would look like a change."""
    assert _fingerprint(SLURM, []) == _fingerprint(SLURM, [])


def test_the_configuration_reference_lists_every_field_with_its_meaning() -> None:
    """docs/reference/configuration.md (generated from the model's docstrings) has a row for every
    field, and that row says what the field does: a field without a docstring has an empty one."""
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "reference" / "configuration.md"
    meanings = {}
    for line in page.read_text().splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            meanings[cells[0].strip("`")] = cells[-1]
    fields = [f.replace("[0]", "[]") for f in leaf_fields()]
    missing = [f for f in fields if f not in meanings]
    assert not missing, f"the configuration reference lacks {missing}"
    unexplained = [f for f in fields if not meanings[f]]
    assert not unexplained, f"fields with no docstring in clusterctl/spec/model.py: {unexplained}"
