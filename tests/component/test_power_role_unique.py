"""Custom role names are unique per Entra tenant, so the power role's name and
id must differ between two deployments of the same stack file into different resource groups or
subscriptions (the shipped example deployed twice collided), and stay put on a re-run."""

from __future__ import annotations

from components.azure.slurm.power_role import power_role_guid, power_role_name
from tests.conftest import plan_stack, resources

RG = "/subscriptions/{sub}/resourceGroups/{rg}"
SUB_A, SUB_B = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"


def _role(rg_id: str) -> tuple[str, str]:
    guid = power_role_guid(rg_id, "azure-h100", "h100")
    return guid, power_role_name("h100", "azure-h100", guid)


def test_the_same_stack_in_another_group_or_subscription_gets_its_own_role() -> None:
    here = _role(RG.format(sub=SUB_A, rg="rg-h100"))
    assert _role(RG.format(sub=SUB_A, rg="rg-h100")) == here  # a re-run: the same role
    assert _role(RG.format(sub=SUB_A.upper(), rg="RG-H100")) == here  # ARM ids ignore case
    for other in (RG.format(sub=SUB_A, rg="rg-h100-b"), RG.format(sub=SUB_B, rg="rg-h100")):
        guid, name = _role(other)
        assert guid != here[0] and name != here[1]


def test_the_program_names_the_role_from_its_resource_group() -> None:
    plan = plan_stack("azure-h100")
    (role,) = resources(plan, "azure-native:authorization:RoleDefinition")
    groups = resources(plan, "azure-native:resources:ResourceGroup")
    (rg,) = [g for g in groups if g.inputs["resourceGroupName"] == "rg-h100-azure-h100"]
    guid = role.inputs["roleDefinitionId"]
    assert role.inputs["roleName"] == power_role_name("h100", "azure-h100", guid)
    assert len(role.inputs["roleName"]) <= 128
    assert guid == power_role_guid(role.inputs["scope"], "azure-h100", "h100")
    assert role.inputs["scope"].endswith("/resourceGroups/" + rg.inputs["resourceGroupName"])
