"""A first Azure Slurm `up` checks that the sign-in may create the power role
(roleDefinitions/write, roleAssignments/write) before anything is built, and says who has it."""

from __future__ import annotations

from clusterctl.errors import UserError
from clusterctl.lifecycle.role_permission import allows, judge
from tests.lifecycle.conftest import STACK

# ARM Permission lists of built-in roles (their actions / notActions, as
# GET .../providers/Microsoft.Authorization/permissions answers them)
OWNER = [{"actions": ["*"], "notActions": []}]
CONTRIBUTOR = [
    {
        "actions": ["*"],
        "notActions": [
            "Microsoft.Authorization/*/Delete",
            "Microsoft.Authorization/*/Write",
            "Microsoft.Authorization/elevateAccess/Action",
        ],
    }
]
USER_ACCESS_ADMIN = [{"actions": ["*/read", "Microsoft.Authorization/*"], "notActions": []}]
RBAC_ADMIN = [  # Role Based Access Control Administrator (MicrosoftDocs built-in-roles)
    {
        "actions": [
            "Microsoft.Authorization/roleAssignments/write",
            "Microsoft.Authorization/roleAssignments/delete",
            "*/read",
            "Microsoft.Support/*",
        ],
        "notActions": [],
    }
]


def test_owner_and_user_access_administrator_may_contributor_may_not() -> None:
    assert judge(OWNER, "sub") == []
    assert judge(CONTRIBUTOR + USER_ACCESS_ADMIN, "sub") == []  # permissions add up
    (problem,) = judge(CONTRIBUTOR, "sub")
    assert "Microsoft.Authorization/roleDefinitions/write" in problem
    assert "ask for Owner or User Access Administrator on" in problem
    assert "subscription sub" in problem
    assert not allows(CONTRIBUTOR, "microsoft.authorization/roledefinitions/WRITE")


def test_a_role_that_only_assigns_is_not_named_for_the_custom_role() -> None:
    """Role Based Access Control Administrator may assign roles but not define one: naming it for
    the custom role sends the user to ask for a role that fails the same way."""
    (problem,) = judge(RBAC_ADMIN, "sub")
    assert "needs Microsoft.Authorization/roleDefinitions/write in" in problem
    assert "Role Based Access Control Administrator" not in problem
    assert "Owner or User Access Administrator" in problem
    only_assign_missing = [{"actions": ["Microsoft.Authorization/roleDefinitions/write"]}]
    (problem,) = judge(only_assign_missing, "sub")
    assert "Role Based Access Control Administrator" in problem


def test_up_as_a_contributor_exits_2_before_anything_is_built(env) -> None:
    env.capacity.permissions = lambda: ("sub-1", CONTRIBUTOR)
    result = env.invoke("up", "-s", STACK, "--yes")
    assert isinstance(result.exception, UserError), result.output
    (problem,) = result.exception.problems
    assert problem.startswith("gpu-clusters:cluster.headNode: the scheduler's power role needs")
    assert not any(c[1:2] in (["preview"], ["up"]) for c in env.calls())
