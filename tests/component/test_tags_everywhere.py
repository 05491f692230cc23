"""Every resource of every shipped stack that can carry tags (or labels) carries the stack's."""

from __future__ import annotations

import pytest

from clusterctl.spec.stackfile import available_stacks
from clusterctl.spec.tags import STACK_LABEL, STACK_TAG
from tests.conftest import plan_stack


@pytest.mark.parametrize("stack", available_stacks())
def test_every_taggable_resource_carries_the_stack_tag(stack: str) -> None:
    plan = plan_stack(stack)
    tagged = 0
    for res in plan.run.resources:
        if not res.custom:
            continue
        tags = res.inputs.get("tags")
        if isinstance(tags, dict):
            assert tags.get(STACK_TAG) == stack, f"{res.type} {res.name} lacks {STACK_TAG}"
            tagged += 1
        labels = (
            (res.inputs.get("metadata") or {}).get("labels")
            if res.type.startswith("kubernetes:")
            else None
        )
        if isinstance(labels, dict):
            assert labels.get(STACK_LABEL) == stack, f"{res.type} {res.name} lacks {STACK_LABEL}"
            tagged += 1
    assert tagged >= 5, f"only {tagged} tagged resources in {stack}"


def test_storage_is_protected_in_the_program() -> None:
    plan = plan_stack("azure-h100")
    storage = [
        r
        for r in plan.run.resources
        if (r.inputs.get("tags") or {}).get("gpu-clusters:role") == "storage"
    ]
    assert storage and all(r.protect for r in storage)
