"""The pure pieces: time parsing, protection closure, transient causes, tag finders, project."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from clusterctl.clouds.aws import AwsTagFinder
from clusterctl.clouds.azure import AzureTagFinder
from clusterctl.errors import UserError
from clusterctl.lifecycle.down import plan_down
from clusterctl.lifecycle.retry import Backoff, GaveUp, transient_cause
from clusterctl.lifecycle.stack_export import parse_time, resources_of
from clusterctl.lifecycle.survivors import CloudResource, survivors
from clusterctl.lifecycle.workspace import find_project, preflight
from tests.lifecycle.conftest import load_fake_module


def test_parse_time_reads_go_nanoseconds_and_zones():
    assert parse_time("2025-05-01T10:00:00.123456789Z") == datetime(
        2025, 5, 1, 10, 0, 0, 123456, UTC
    )
    assert parse_time("2025-05-01T10:00:00+02:00") == datetime(2025, 5, 1, 8, 0, tzinfo=UTC)
    assert parse_time("2025-05-01T10:00:00") == datetime(2025, 5, 1, 10, 0, tzinfo=UTC)
    assert parse_time("yesterday") is None and parse_time(None) is None


def _row(name, protect=False, deps=(), parent=None, role=None, custom=True):
    tags = {"gpu-clusters:role": role} if role else {}
    return {"urn": f"urn:pulumi:s::p::t::{name}", "type": "azure-native:x:Y", "custom": custom,
            "protect": protect, "dependencies": [f"urn:pulumi:s::p::t::{d}" for d in deps],
            "parent": f"urn:pulumi:s::p::t::{parent}" if parent else None,
            "id": f"/ID/{name}", "inputs": {"tags": tags}}  # fmt: skip


def test_plan_keeps_protected_storage_and_what_it_needs():
    rows = [
        _row("comp", custom=False),
        _row("rg", parent="comp"),
        _row("disk", protect=True, deps=["rg"], parent="comp", role="storage"),
        _row("vm", deps=["disk"]),
        _row("vnet", deps=["rg"]),
    ]
    keep = plan_down(resources_of({"resources": rows}), include_storage=False)
    assert {r.name for r in keep.keep} == {"rg", "disk"}
    assert {r.name for r in keep.destroy} == {"vm", "vnet"}
    assert keep.exclude_protected and not keep.unprotect

    drop = plan_down(resources_of({"resources": rows}), include_storage=True)
    assert [r.name for r in drop.unprotect] == ["disk"]
    assert not drop.keep and not drop.exclude_protected
    assert {r.name for r in drop.destroy} == {"rg", "disk", "vm", "vnet"}


def test_include_storage_leaves_other_protected_resources_protected():
    rows = [_row("dns", protect=True), _row("disk", protect=True, role="storage")]
    plan = plan_down(resources_of({"resources": rows}), include_storage=True)
    assert [r.name for r in plan.unprotect] == ["disk"]
    assert [r.name for r in plan.keep] == ["dns"] and plan.exclude_protected


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (
            "api error DependencyViolation: resource sg-1 has a dependent object",
            "DependencyViolation",
        ),
        (
            'Code="InUseSubnetCannotBeDeleted" Message="Subnet x is in use"',
            "InUseSubnetCannotBeDeleted",
        ),
        ('Code="RetryableError"', "RetryableError"),
        ('Code="AuthorizationFailed"', None),
        ("NotADependencyViolation", None),
    ],
)
def test_transient_causes(text, cause):
    assert transient_cause(text) == cause


def test_backoff_waits_between_tries_and_gives_up():
    waits, tries = [], []

    def attempt():
        tries.append(1)
        raise RuntimeError("DependencyViolation")

    with pytest.raises(GaveUp) as info:
        Backoff((1.0, 2.0), waits.append).run(attempt, str)
    assert waits == [1.0, 2.0] and len(tries) == 3 and info.value.attempts == 3


def test_aws_finder_drops_terminated_instances():
    answers = {
        "resourcegroupstaggingapi": {"ResourceTagMappingList": [
            {"ResourceARN": "arn:aws:ec2:us-east-1:1:instance/i-dead"},
            {"ResourceARN": "arn:aws:ec2:us-east-1:1:instance/i-live"},
            {"ResourceARN": "arn:aws:ec2:us-east-1:1:security-group/sg-1"},
        ]},
        "ec2": [["i-dead", "terminated"], ["i-live", "running"]],
    }  # fmt: skip
    seen = []

    def run(argv):
        seen.append(argv)
        return json.dumps(answers[argv[1]])

    found = AwsTagFinder("us-east-1", run).tagged("aws-p5")
    assert [r.name for r in found] == ["i-live", "sg-1"]
    assert found[1].type == "ec2:security-group"
    assert "Key=gpu-clusters:stack,Values=aws-p5" in seen[0]
    assert seen[1][seen[1].index("--instance-ids") + 1 :][:2] == ["i-dead", "i-live"]


def test_azure_finder_asks_for_resources_and_groups():
    seen = []

    def run(argv):
        seen.append(argv)
        if argv[1] == "group":
            return json.dumps([{"id": "/subscriptions/s/resourceGroups/rg", "name": "rg"}])
        return json.dumps([{"id": "/x/disks/d", "type": "Microsoft.Compute/disks", "name": "d"}])

    found = AzureTagFinder(run=run).tagged("azure-h100")
    assert [r.type for r in found] == [
        "Microsoft.Compute/disks",
        "Microsoft.Resources/resourceGroups",
    ]
    assert all(a[3:5] == ["--tag", "gpu-clusters:stack=azure-h100"] for a in seen)


def test_survivors_ignore_kept_ids_case_and_duplicates():
    found = [CloudResource("/A/disk", "d", "disk"), CloudResource("/a/NIC", "n", "nic"),
             CloudResource("/A/nic", "n", "nic")]  # fmt: skip
    assert [r.name for r in survivors(found, ["/a/DISK"])] == ["nic"]


def test_project_honours_stack_config_dir(tmp_path, monkeypatch):
    (tmp_path / "Pulumi.yaml").write_text(
        "name: gpu-clusters\nruntime: python\nstackConfigDir: conf\nbackend:\n  url: file://./st\n"
    )
    monkeypatch.setenv("GPU_CLUSTERS_PROJECT_DIR", str(tmp_path))
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    project = find_project()
    assert project.stack_file("dev") == tmp_path.resolve() / "conf" / "Pulumi.dev.yaml"
    assert project.backend_url == "file://./st"

    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    with pytest.raises(UserError, match="PULUMI_CONFIG_PASSPHRASE"):
        preflight(project, "dev")
    assert (tmp_path / "st").is_dir()  # the CLI cannot open a missing local state folder
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "")
    preflight(project, "dev")


def test_project_elsewhere_is_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_CLUSTERS_PROJECT_DIR", str(tmp_path))
    with pytest.raises(UserError, match=r"no Pulumi\.yaml of project 'gpu-clusters'"):
        find_project()


def test_fake_closure_matches_ours():
    """The fake's --exclude-protected and plan_down agree on what stays."""
    fake = load_fake_module()
    rows = [_row("rg"), _row("disk", protect=True, deps=["rg"]), _row("vm", deps=["disk"])]
    kept = fake.closure(rows, [rows[1]["urn"]])
    plan = plan_down(resources_of({"resources": rows}), include_storage=False)
    assert kept == {r.urn for r in plan.keep}


def test_include_storage_lifts_the_untaggable_file_share_with_its_account():
    # /home on Azure Files: the account is tagged role=storage, the share (no tags) is storage too,
    # or --include-storage would leave it protected and destroy would stop on it
    rows = [_row("account", protect=True, role="storage"), _row("share", protect=True)]
    rows[1]["type"] = "azure-native:storage:FileShare"
    plan = plan_down(resources_of({"resources": rows}), include_storage=True)
    assert sorted(r.name for r in plan.unprotect) == ["account", "share"]
    keep = plan_down(resources_of({"resources": rows}), include_storage=False)
    assert sorted(r.name for r in keep.keep) == ["account", "share"]
