"""The team reaches a running Azure Slurm cluster through one Run Command on the scheduler, whose
script carries the team: a change of the team changes its text, so `up` runs it again in place;
a stack without accounting has none."""

from __future__ import annotations

from tests.conftest import plan_stack, resources

RUN = "azure-native:compute:VirtualMachineRunCommandByVirtualMachine"
VM = "azure-native:compute:VirtualMachine"


def _team_run(plan):
    runs = [r for r in resources(plan, RUN) if r.inputs["runCommandName"] == "gpu-clusters-team"]
    assert len(runs) == 1, [r.inputs["runCommandName"] for r in resources(plan, RUN)]
    return runs[0]


def test_the_team_run_command_carries_the_team_and_runs_again_when_it_changes() -> None:
    plan = plan_stack("azure-team")
    run = _team_run(plan)
    (vm,) = [v for v in resources(plan, VM) if v.inputs["tags"]["gpu-clusters:role"] == "scheduler"]
    assert vm.name in run.depends_on
    assert run.inputs["treatFailureAsDeploymentFailure"] is True
    script = run.inputs["source"]["script"]
    assert "ann\t20001\tvision\tyes" in script and "cloud-init status --wait" in script
    assert run.inputs["tags"]["gpu-clusters:stack"] == "azure-team"
    moved = _team_run(plan_stack("azure-team", "users[1].account=vision"))
    assert moved.inputs["source"]["script"] != script
    assert "bob\t20002\tvision\tno" in moved.inputs["source"]["script"]


def test_without_accounting_there_is_no_team_run_command() -> None:
    plan = plan_stack("azure-h100")
    names = [r.inputs["runCommandName"] for r in resources(plan, RUN)]
    assert "gpu-clusters-team" not in names and "gpu-clusters-slurm-config" in names
