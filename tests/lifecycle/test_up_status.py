"""`clusterctl up` and `status` end to end: pulumi.automation driving the fake `pulumi`."""

from __future__ import annotations

import json

from clusterctl.errors import UserError
from clusterctl.lifecycle.workspace import find_project, load_spec_for
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour
from tests.lifecycle.conftest import NOW, STACK, parse_time


def _cost() -> float:
    return cost_per_hour(load_spec_for(find_project(), STACK), catalog()).total


def test_up_runs_pulumi_up_through_the_automation_api(env):
    result = env.invoke("up", "-s", STACK, "--yes")

    assert result.exit_code == 0, result.output
    calls = env.calls()
    assert calls[0] == ["version"]  # the SDK's version check
    assert calls[1] == ["--non-interactive", "stack", "select", "--stack", STACK]
    assert calls[2] == ["--non-interactive", "stack", "init", STACK]  # select failed: created
    up = next(c for c in calls if c[1:2] == ["up"])
    assert up[:7] == [
        "--non-interactive",
        "up",
        "--yes",
        "--skip-preview",
        "--color",
        "never",
        "--exec-kind",
    ]
    assert up[7] == "auto.local"  # the project's own program, not an inline one
    assert up[8] == "--event-log" and up[9].startswith(
        "tcp://127.0.0.1:"
    )  # gRPC events (CLI > 3.205)
    assert up[-2:] == ["--stack", STACK]
    assert [
        "--non-interactive",
        "stack",
        "output",
        "--json",
        "--show-secrets",
        "--stack",
        STACK,
    ] in calls
    raw = env.raw_calls()[calls.index(up)]
    assert raw["cwd"] == str(env.project)
    assert raw["env"]["PULUMI_AUTOMATION_API"] == "true"
    assert raw["env"]["PULUMI_HOME"].endswith("pulumi-home")
    assert "rg-h100-azure-h100" in result.output
    assert "[secret]" in result.output and "PRIVATE KEY" not in result.output
    assert f"${_cost():,.2f} per hour" in result.output
    assert "11 create" in result.output  # counted from the engine event stream


def test_up_json_prints_outputs_with_secrets_masked(env):
    result = env.invoke("up", "-s", STACK, "--json", "--yes")

    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout[result.stdout.index("{") :])
    assert doc["outputs"]["sshPrivateKey"] == "[secret]"
    assert doc["outputs"]["clusterName"] == "h100"
    assert doc["costPerHourUsd"] == _cost()
    assert doc["changes"] == {"create": 11}


def test_up_with_an_older_cli_reads_events_from_a_log_file(env):
    env.scenario(version="v3.200.0")

    result = env.invoke("up", "-s", STACK, "--yes")

    assert result.exit_code == 0, result.output
    up = next(c for c in env.calls() if "up" in c)
    log = up[up.index("--event-log") + 1]
    assert not log.startswith("tcp://") and log.endswith("eventlog.txt")
    assert "11 create" in result.output


def test_a_too_old_cli_is_a_clear_error(env):
    env.scenario(version="v3.0.1")

    result = env.invoke("up", "-s", STACK, "--yes")

    assert result.exit_code != 0
    assert "Minimum version requirement failed" in str(result.exception)
    assert env.calls() == [["version"]]


def test_status_reports_nodes_since_and_money_spent(deployed):
    result = deployed.invoke("status", "-s", STACK, "--json")

    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["deployed"] is True
    assert doc["since"] == "2025-03-01T02:00:00Z"
    assert doc["hours"] == 10.0
    assert doc["costPerHourUsd"] == _cost()
    assert doc["spentUsd"] == round(10 * _cost(), 2)
    assert doc["nodeGroups"] == [
        {"name": "scheduler", "sku": "Standard_D8s_v5", "nodes": 1},
        {"name": "gpu", "sku": "Standard_ND96isr_H100_v5", "nodes": 2},
    ]
    assert doc["resources"] == 8  # cloud resources: not the stack, provider or component
    assert doc["lastUpdate"]["kind"] == "update" and doc["lastUpdate"]["result"] == "succeeded"
    assert doc["outputs"]["sshPrivateKey"] == "[secret]"
    assert [
        "--non-interactive",
        "stack",
        "export",
        "--show-secrets",
        "--stack",
        STACK,
    ] in deployed.calls()


def test_status_table(deployed):
    result = deployed.invoke("status", "-s", STACK)

    assert result.exit_code == 0, result.output
    assert "up since 2025-03-01 02:00 UTC" in result.output
    assert "Standard_ND96isr_H100_v5" in result.output
    assert "reach it: ssh azureuser@20.55.10.4" in result.output  # the sshCommand output
    assert f"spent so far: ${round(10 * _cost(), 2):,.2f}" in result.output


def test_status_counts_the_deployed_size_not_an_edited_stack_file(deployed):
    stack_file = deployed.project / "stacks" / f"Pulumi.{STACK}.yaml"
    stack_file.write_text(stack_file.read_text().replace("nodes: 2 ", "nodes: 8 "))

    doc = json.loads(deployed.invoke("status", "-s", STACK, "--json").stdout)

    assert doc["nodeGroups"][1]["nodes"] == 2  # from the config the last update ran with


def test_status_of_a_stack_never_deployed(env):
    result = env.invoke("status", "-s", STACK, "--json")

    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["deployed"] is False and doc["spentUsd"] == 0.0
    assert [
        "--non-interactive",
        "stack",
        "init",
        STACK,
    ] not in env.calls()  # status creates nothing


def test_up_previews_with_cost_before_and_after_then_asks(env):
    """`up` shows what changes and the cost per hour before and after first."""
    env.interactive = True
    refused = env.invoke("up", "-s", STACK, input="n\n")

    assert refused.exit_code == 1, refused.output
    assert "preview of stack azure-h100: 11 to create" in refused.output
    assert f"nothing deployed -> ${_cost():,.2f}" in refused.output
    assert "idle with power saving: $" in refused.output
    assert "Apply these changes to stack azure-h100?" in refused.output
    assert [c[1] for c in env.calls() if c[1:2] in (["preview"], ["up"])] == ["preview"]

    accepted = env.invoke("up", "-s", STACK, input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert [c[1] for c in env.calls() if c[1:2] in (["preview"], ["up"])] == [
        "preview",
        "preview",
        "up",
    ]


def test_up_without_a_terminal_needs_yes(env):
    result = env.invoke("up", "-s", STACK)

    assert result.exit_code != 0
    assert "pass --yes" in str(result.exception) + result.output
    assert not any(c[1:2] == ["up"] for c in env.calls())


def test_a_second_up_shows_the_deployed_cost_as_before(deployed):
    deployed.interactive = True
    result = deployed.invoke("up", "-s", STACK, input="n\n")

    assert f"${_cost():,.2f} -> ${_cost():,.2f}" in result.output


def test_up_without_quota_exits_2_before_anything_is_previewed_or_built(env):
    from tests.lifecycle.conftest import FakeCapacity

    skus, usages = FakeCapacity.ROOM
    env.capacity.answer = (skus, [dict(u, limit=100) if u["name"]["value"] ==
                                  "standardNDSH100v5Family" else u for u in usages])  # fmt: skip
    result = env.invoke("up", "-s", STACK, "--yes")
    # a UserError: clusterctl.cli.main prints each problem on its own line and exits 2
    assert isinstance(result.exception, UserError), result.output
    (problem,) = result.exception.problems
    assert problem.startswith("gpu-clusters:cluster.partitions[0].sku: 192 vCPUs needed in eastus")
    assert env.capacity.asked == ["eastus"]
    assert not any(c[1:2] in (["preview"], ["up"]) for c in env.calls())


def test_up_says_when_azure_could_not_be_asked_and_goes_on(env):
    from clusterctl.lifecycle.capacity import CapacityUnavailable

    env.capacity.answer = CapacityUnavailable("no ARM_SUBSCRIPTION_ID and no Azure CLI")
    result = env.invoke("up", "-s", STACK, "--yes")
    assert result.exit_code == 0, result.output
    assert "not checked with Azure: no ARM_SUBSCRIPTION_ID and no Azure CLI" in result.output
    assert "az vm list-usage -l eastus" in result.output


def _edit(env, old: str, new: str) -> None:
    stack_file = env.project / "stacks" / f"Pulumi.{STACK}.yaml"
    text = stack_file.read_text()
    assert old in text
    stack_file.write_text(text.replace(old, new))


def test_up_says_which_nodes_a_shrink_drains_and_deletes(deployed):
    deployed.interactive = True
    _edit(deployed, "nodes: 2 ", "nodes: 1 ")
    result = deployed.invoke("up", "-s", STACK, input="n\n")

    assert "edits to the deployed cluster:" in result.output
    assert (
        "partitions[0].nodes: in place (the partition's last scale sets shrink): 2 -> 1: "
        "drains gpu-pg0-2, waits until they are idle, then deletes their VMs"
    ) in result.output
    assert "Apply these changes to stack azure-h100?" in result.output


def test_up_refuses_a_replacement_that_loses_jobs_without_the_flag(deployed):
    _edit(deployed, "sku: Standard_D8s_v5 ", "sku: Standard_D4s_v5 ")
    result = deployed.invoke("up", "-s", STACK, "--yes")

    assert isinstance(result.exception, UserError), result.output
    (line,) = result.exception.problems
    assert line.startswith("headNode.sku: 'Standard_D8s_v5' -> 'Standard_D4s_v5' replaces the")
    assert "--allow-replace" in line
    assert not any(c[1:2] in (["preview"], ["up"]) for c in deployed.calls()[-3:])

    accepted = deployed.invoke("up", "-s", STACK, "--yes", "--allow-replace")
    assert "asking Azure whether eastus has Standard_D4s_v5" in accepted.output  # past the gate


def test_up_refuses_a_new_scale_set_limit_on_a_deployed_partition(deployed):
    _edit(deployed, "nodes: 2 ", "nodes: 2\n        maxNodesPerScaleSet: 1 ")
    result = deployed.invoke("up", "-s", STACK, "--yes", "--allow-replace")

    assert isinstance(result.exception, UserError), result.output
    assert result.exception.problems[0].startswith(
        "partitions[0].maxNodesPerScaleSet: cannot change on a deployed cluster"
    )


def test_up_names_what_a_moved_head_image_pin_replaces_and_that_the_schedulers_data_stays(
    deployed,
):
    pin = "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:22.04.202502010"
    _edit(deployed, "accounting: false ", f"accounting: false\n      image: {pin} ")
    result = deployed.invoke("up", "-s", STACK, "--yes", "--allow-replace")

    (line,) = [x for x in result.output.splitlines() if x.strip().startswith("headNode.image:")]
    assert "headNode.image: replaces (the scheduler VM (deleted, then created again" in line
    assert f"-> '{pin}'; kept: the scheduler keeps its NIC (the same private and public IP)" in line
    assert "data disk: /home (unless on Azure Files), /sched, Slurm's state" in line


def _leak_record():
    from clusterctl.power.down_billing import DownBillingNode, DownBillingRecord

    return DownBillingRecord(
        checkedAt=parse_time(NOW).timestamp() - 120,
        nodes=[
            DownBillingNode(
                node="gpu-pg0-2",
                vm="demo-gpu-pg0_1",
                power="running",
                reason="gpucl: power: deallocate failed: OperationNotAllowed",
                usdPerHour=98.32,
                deallocateSent=True,
            ),
            DownBillingNode(
                node="gpu-pg0-1",
                vm="demo-gpu-pg0_0",
                power="running",
                reason="admin: bad DIMM",
                usdPerHour=98.32,
                deallocateSent=False,
            ),
        ],
    )


def test_status_lists_each_node_down_with_its_vm_billing_and_the_hourly_cost(deployed):
    deployed.down_billing = _leak_record()

    doc = json.loads(deployed.invoke("status", "-s", STACK, "--json").stdout)
    table = deployed.invoke("status", "-s", STACK).output

    assert [n["node"] for n in doc["downVmRunning"]["nodes"]] == ["gpu-pg0-2", "gpu-pg0-1"]
    assert doc["downVmRunning"]["usdPerHour"] == 196.64
    assert doc["downVmRunningUnread"] is None
    assert "DOWN with the VM running" in table
    assert "gpu-pg0-2" in table and "demo-gpu-pg0_1" in table and "$98.32/h" in table
    assert "they bill $196.64/h" in table


def test_status_says_when_the_down_nodes_vms_could_not_be_checked(deployed):
    deployed.down_billing = "cannot reach azureuser@20.55.10.4 over ssh: Connection timed out"

    result = deployed.invoke("status", "-s", STACK)
    doc = json.loads(deployed.invoke("status", "-s", STACK, "--json").stdout)

    assert result.exit_code == 0
    assert "DOWN nodes' VMs not checked: cannot reach" in result.output
    assert doc["downVmRunning"] is None and doc["downVmRunningUnread"].startswith("cannot reach")


def test_status_reads_no_down_billing_record_of_a_stack_never_deployed(env):
    env.down_billing = "should not be shown"
    doc = json.loads(env.invoke("status", "-s", STACK, "--json").stdout)
    assert doc["downVmRunning"] is None and doc["downVmRunningUnread"] is None
