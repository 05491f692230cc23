"""Can the signed-in identity create the power role? The Azure Slurm cluster makes a custom role
(components/azure/slurm/power_role.py) and assigns it: Microsoft.Authorization/roleDefinitions/write
and roleAssignments/write. Owner and User Access Administrator hold both; Role Based Access Control
Administrator holds only roleAssignments/write (MicrosoftDocs role-based-access-control
built-in-roles: its actions are roleAssignments/write and /delete, */read, Microsoft.Support/*), so
it cannot create the custom role; Contributor holds neither (its notActions exclude
Microsoft.Authorization/*/Write).
`pulumi up` alone fails on them after the network, disks and identity exist.

Pure: the answer comes in as ARM's Permission list (GET /subscriptions/{id}/providers/
Microsoft.Authorization/permissions: [{actions, notActions, ...}]); capacity_azure.py fetches it.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from clusterctl.spec.model import field_path

NEEDED = (
    "Microsoft.Authorization/roleDefinitions/write",
    "Microsoft.Authorization/roleAssignments/write",
)
ROLES = {
    "Microsoft.Authorization/roleDefinitions/write": "Owner or User Access Administrator",
    "Microsoft.Authorization/roleAssignments/write": (
        "Owner, User Access Administrator or Role Based Access Control Administrator"
    ),
}
"""Built-in roles that grant each action (a role for roleDefinitions/write grants both)."""


def _match(pattern: str, action: str) -> bool:
    return fnmatchcase(action.lower(), pattern.lower())  # ARM action names ignore case


def allows(permissions: list[dict], action: str) -> bool:
    """ARM's rule: one Permission grants `action` when one of its actions matches it and none of
    its own notActions does; the caller's Permissions add up."""
    return any(
        any(_match(a, action) for a in p.get("actions") or [])
        and not any(_match(n, action) for n in p.get("notActions") or [])
        for p in permissions
    )


def judge(permissions: list[dict], subscription: str) -> list[str]:
    """One line when the power role cannot be made, naming what is missing and who has it."""
    missing = [a for a in NEEDED if not allows(permissions, a)]
    if not missing:
        return []
    return [
        f"{field_path('headNode')}: the scheduler's power role needs {' and '.join(missing)} "
        f"in subscription {subscription}, which your sign-in lacks; ask for {ROLES[missing[0]]} "
        "on the subscription (or on the resource group, created beforehand), or run `up` as "
        "someone who holds it"
    ]
