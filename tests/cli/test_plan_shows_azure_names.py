"""`plan` shows what Azure will show: the resource group by the name the program gives it, and
role scopes as real ARM ids (no mock provider in them)."""

from __future__ import annotations

import json
import re

from clusterctl.spec.load import load_stack_spec

STACK = "azure-h100"


def test_plan_names_the_resource_group_azure_will_show(cli) -> None:
    doc = json.loads(cli("plan", "-s", STACK, "--json").stdout)
    groups = [r for r in doc["resources"] if r["type"] == "azure-native:resources:ResourceGroup"]
    assert len(groups) == 2  # the cluster's and its backups' snapshots'
    spec, _ = load_stack_spec(STACK)
    text = cli("plan", "-s", STACK).stdout
    real = [rg["inputs"]["resourceGroupName"] for rg in groups]
    for rg, name in zip(groups, real, strict=True):
        assert spec.name in name and name != rg["name"]
        assert f"{rg['name']} azure-native:resources:ResourceGroup named {name}" in text
    scopes = [line.strip() for line in text.splitlines() if line.strip().startswith("/subscr")]
    assert scopes, text
    for scope in scopes:
        assert any(f"/resourceGroups/{name}" in scope for name in real), scope
        assert not any(f"/resourceGroups/{rg['name']}" in scope for rg in groups), scope


def test_role_scopes_are_arm_ids_of_the_real_form(cli) -> None:
    text = cli("plan", "-s", STACK).stdout + json.dumps(
        json.loads(cli("plan", "-s", STACK, "--json").stdout)
    )
    assert "providers/mock" not in text
    # a resource group's resource, or a subscription's (a built-in role's definition)
    arm = re.compile(
        r"/subscriptions/[0-9a-f-]{36}(/resourceGroups/[\w.-]+)?/providers/Microsoft\.\w+/[a-zA-Z]+/"
    )
    scopes = re.findall(r"/subscriptions/[^\s\"]+/providers/[^\s\"]+", text)
    assert scopes and all(arm.match(s) for s in scopes), scopes
