"""`clusterctl down` end to end against the fake `pulumi` and a fake cloud."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from clusterctl.errors import UserError
from clusterctl.lifecycle.survivors import CloudResource
from tests.lifecycle.conftest import FAKE, ROOT, STACK

SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"
RG = f"{SUB}/resourceGroups/rg-h100-{STACK}"
DISK = f"{RG}/providers/Microsoft.Compute/disks/h100-shared"
DISK_URN = (
    f"urn:pulumi:{STACK}::gpu-clusters::gpu-clusters:azure:AzureSlurmCluster"
    "$azure-native:compute:Disk::h100-shared"
)
NI = ["--non-interactive"]


def ops(calls: list[list[str]]) -> list[str]:
    """The verbs the fake saw, in order: 'refresh', 'destroy', 'state unprotect', ..."""
    names = []
    for argv in calls:
        words = [w for w in argv if not w.startswith("-")]
        names.append(" ".join(words[:2]) if words[0] in ("stack", "state") else words[0])
    return names


def left_in_state(env) -> set[str]:
    return {r["urn"].rsplit("::", 1)[-1] for r in env.state_of()["resources"] if r.get("custom")}


def test_confirmation_refused_destroys_nothing(deployed):
    deployed.interactive = True

    result = deployed.invoke("down", "-s", STACK, input="n\n")

    assert result.exit_code == 1
    assert "nothing destroyed" in result.output
    assert ops(deployed.calls()) == ["version", "stack select", "stack export"]
    assert "h100-gpu" in left_in_state(deployed)


def test_down_shows_what_goes_and_the_cost_so_far_before_asking(deployed):
    deployed.interactive = True

    result = deployed.invoke("down", "-s", STACK, input="n\n")

    before_prompt = result.output.split("Destroy ")[0]
    assert "azure-native:compute:VirtualMachineScaleSet" in before_prompt
    assert "h100-scheduler" in before_prompt
    assert "kept" in before_prompt and "h100-shared" in before_prompt
    assert "running since 2025-03-01 02:00 UTC" in before_prompt
    assert "Destroy 6 resources of stack azure-h100?" in result.output


def test_non_interactive_without_yes_refuses(deployed):
    result = deployed.invoke("down", "-s", STACK)

    assert isinstance(result.exception, UserError)
    assert "pass --yes" in str(result.exception)
    assert "destroy" not in ops(deployed.calls())


def test_confirmed_interactively_destroys(deployed):
    deployed.interactive = True
    deployed.cloud.tagged_resources = [
        CloudResource(DISK, "Microsoft.Compute/disks", "h100-shared")
    ]

    result = deployed.invoke("down", "-s", STACK, input="y\n")

    assert result.exit_code == 0, result.output
    assert "destroy" in ops(deployed.calls())


def test_yes_keeps_storage_and_proves_the_rest_gone(deployed):
    deployed.cloud.tagged_resources = [
        CloudResource(DISK.upper(), "Microsoft.Compute/disks", "h100-shared"),  # ids differ in case
        CloudResource(RG, "Microsoft.Resources/resourceGroups", f"rg-h100-{STACK}"),
    ]

    result = deployed.invoke("down", "-s", STACK, "--yes")

    assert result.exit_code == 0, result.output
    calls = deployed.calls()
    assert ops(calls) == [
        "version", "stack select", "stack export",  # plan
        "refresh", "stack history", "stack export",  # refresh (SDK reads its summary), re-plan
        "destroy", "stack history",  # destroy
        "stack export",  # prove
    ]  # fmt: skip
    refresh = calls[3]
    assert refresh[:4] == [*NI, "refresh", "--skip-preview", "--yes"]
    destroy = calls[6]
    assert destroy[:4] == [*NI, "destroy", "--skip-preview", "--yes"]
    assert "--exclude-protected" in destroy
    assert destroy[-2:] == ["--stack", STACK]
    assert left_in_state(deployed) == {"h100-shared", "h100-rg", "default_3_5_0"}
    assert deployed.cloud.asked == 1
    assert "is empty but for what it keeps" in result.output
    assert "clusterctl down -s azure-h100 --include-storage" in result.output
    assert "no other resource tagged gpu-clusters:stack=azure-h100" in result.output


def test_include_storage_unprotects_then_destroys_everything(deployed):
    result = deployed.invoke("down", "-s", STACK, "--yes", "--include-storage")

    assert result.exit_code == 0, result.output
    calls = deployed.calls()
    unprotect = [*NI, "state", "unprotect", "--yes", "--stack", STACK, "--", DISK_URN]
    assert unprotect in calls
    destroy = next(c for c in calls if c[1:2] == ["destroy"])
    assert calls.index(unprotect) < calls.index(destroy)
    assert "--exclude-protected" not in destroy
    assert deployed.state_of()["resources"] == []
    assert "the shared storage is deleted too" in result.output
    assert f"stack {STACK} is empty" in result.output and "kept on purpose" not in result.output


def test_the_fake_refuses_to_delete_protected_storage_like_the_engine(deployed):
    """So the two tests above prove the unprotect / exclude-protected, not the fake's leniency."""
    env = {**os.environ, "FAKE_PULUMI_DIR": str(deployed.state)}
    run = subprocess.run(
        [sys.executable, str(FAKE), "destroy", "--yes", "--skip-preview", "--stack", STACK],
        capture_output=True, text=True, env=env, cwd=deployed.project, check=False,
    )  # fmt: skip
    assert run.returncode == 255
    assert "marked for protection" in run.stderr
    assert "h100-gpu" in left_in_state(deployed)


@pytest.mark.parametrize(
    ("recording", "blocked", "cause"),
    [
        ("dependency_violation.txt", "h100-nsg", "DependencyViolation"),
        ("in_use_subnet.txt", "h100-compute", "InUseSubnetCannotBeDeleted"),
    ],
)
def test_transient_dependency_failure_is_retried(deployed, recording, blocked, cause):
    deployed.scenario(fail_destroy={"times": 1, "error": recording, "blocked": blocked})

    result = deployed.invoke("down", "-s", STACK, "--yes")

    assert result.exit_code == 0, result.output
    assert ops(deployed.calls()).count("destroy") == 2
    assert deployed.sleeps == [5.0]  # the first backoff delay
    assert f"destroy attempt 1 hit {cause}" in result.output
    assert left_in_state(deployed) == {"h100-shared", "h100-rg", "default_3_5_0"}


def test_transient_failure_that_persists_gives_up(deployed):
    deployed.scenario(
        fail_destroy={"times": 9, "error": "in_use_subnet.txt", "blocked": "h100-compute"}
    )

    result = deployed.invoke("down", "-s", STACK, "--yes")

    assert result.exit_code == 1
    assert ops(deployed.calls()).count("destroy") == 3  # first try + one per delay
    assert deployed.sleeps == [5.0, 10.0]
    assert "still failing with InUseSubnetCannotBeDeleted after 3 attempts" in result.output
    assert "pulumi destroy failed" in result.output


def test_other_failures_are_not_retried(deployed):
    deployed.scenario(
        fail_destroy={"times": 1, "error": "authorization_failed.txt", "blocked": "h100-nsg"}
    )

    result = deployed.invoke("down", "-s", STACK, "--yes")

    assert result.exit_code == 1
    assert ops(deployed.calls()).count("destroy") == 1
    assert deployed.sleeps == []
    assert "AuthorizationFailed" in result.output


def test_survivors_in_the_cloud_exit_1(deployed):
    orphan = f"{RG}/providers/Microsoft.Network/networkInterfaces/h100-gpu-nic0"
    deployed.cloud.tagged_resources = [
        CloudResource(DISK, "Microsoft.Compute/disks", "h100-shared"),
        CloudResource(orphan, "Microsoft.Network/networkInterfaces", "h100-gpu-nic0"),
    ]

    result = deployed.invoke("down", "-s", STACK, "--yes")

    assert result.exit_code == 1
    assert "1 resources tagged gpu-clusters:stack=azure-h100 survived" in result.output
    assert "h100-gpu-nic0" in result.output
    assert "h100-shared (azure-native:compute:Disk)" in result.output  # kept, not a survivor


def test_cloud_not_reachable_is_said_with_the_command_to_check(deployed):
    deployed.cloud.unavailable = "`az` is not installed"

    result = deployed.invoke("down", "-s", STACK, "--yes")

    assert result.exit_code == 0, result.output
    assert "not checked with the cloud: `az` is not installed" in result.output
    assert "az resource list --tag gpu-clusters:stack=azure-h100" in result.output


def test_down_of_a_missing_stack_still_asks_the_cloud(env):
    env.cloud.tagged_resources = [CloudResource(RG, "Microsoft.Resources/resourceGroups", "rg")]

    result = env.invoke("down", "-s", STACK, "--yes")

    assert result.exit_code == 1
    assert "no such stack in the backend" in result.output
    assert "destroy" not in ops(env.calls())
    assert env.cloud.asked == 1


# -- through clusterctl's real entry point (exit codes and one-line errors) -------------------

MAIN = """
from clusterctl.cli import app, main
from clusterctl.cli.lifecycle import register
if not any((c.name or c.callback.__name__) == "down" for c in app.registered_commands):
    register(app)
main()
"""


def run_main(
    env, *args: str, path: str | None = None, drop: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    environ = {**os.environ, "HOME": str(env.state), "PATH": path or os.environ["PATH"]}
    for name in drop:
        environ.pop(name, None)
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args], capture_output=True, text=True, env=environ,
        cwd=ROOT, stdin=subprocess.DEVNULL, timeout=120, check=False,
    )  # fmt: skip


def test_cli_missing_is_one_clear_line_and_exit_2(env):
    run = run_main(env, "down", "-s", STACK, "--yes", path="/usr/bin:/bin")

    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: the Pulumi CLI (`pulumi`) is not on PATH"
    )
    assert "https://get.pulumi.com" in run.stderr and "Traceback" not in run.stderr
    assert env.calls() == []


@pytest.mark.parametrize("argv", [("up", "-s", STACK), ("down", "-s", STACK, "--yes")])
def test_cli_missing_is_said_before_the_passphrase(env, argv):
    # The project keeps its state in a local folder with passphrase secrets, and no passphrase
    # is set: the missing CLI is still the one thing reported (no use setting one without it).
    passphrase = ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE")
    run = run_main(env, *argv, path="/usr/bin:/bin", drop=passphrase)

    assert run.returncode == 2, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the Pulumi CLI (`pulumi`) is not on PATH" in errors[0], errors
    assert "PASSPHRASE" not in run.stderr


def test_non_interactive_without_yes_exits_2_through_main(deployed):
    run = run_main(deployed, "down", "-s", STACK)

    assert run.returncode == 2, run.stderr
    assert "refusing to destroy without confirmation" in run.stderr and "pass --yes" in run.stderr
    assert "destroy" not in ops(deployed.calls())


def test_status_after_down_is_down_with_the_kept_disk_not_a_running_cluster(deployed):
    # the kept /home disk and its resource group are not a cluster: no ssh
    # line, no spend at the full cluster's rate
    assert deployed.invoke("down", "-s", STACK, "--yes").exit_code == 0

    doc = json.loads(deployed.invoke("status", "-s", STACK, "--json").stdout)
    assert doc["deployed"] is False
    assert doc["costPerHourUsd"] == 0.0 and doc["spentUsd"] == 0.0
    assert doc["access"] is None
    assert {r["name"] for r in doc["kept"]} == {"h100-shared", "h100-rg"}

    text = deployed.invoke("status", "-s", STACK)
    assert text.exit_code == 0, text.output
    assert "down; nothing runs" in text.output and "h100-shared" in text.output
    assert "reach it" not in text.output and "spent so far" not in text.output


def test_down_json_is_one_document_with_what_went_and_what_was_kept(deployed):
    # `down --json`; progress on stderr, the document alone on stdout
    result = deployed.invoke("down", "-s", STACK, "--yes", "--json")

    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["stack"] == STACK and doc["exit_code"] == 0
    assert {r["name"] for r in doc["kept"]} >= {"h100-shared"}
    assert doc["destroyed"] and doc["left"] == [] and doc["survivors"] == []
    assert doc["cloudChecked"] is True


def test_down_json_without_yes_is_a_json_error(deployed):
    result = deployed.invoke("down", "-s", STACK, "--json")
    assert result.exit_code == 2
    assert "--yes" in json.loads(result.stdout)["error"]
