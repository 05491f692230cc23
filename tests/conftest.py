"""Shared fixtures. Plans run the real Pulumi program under mocks and return recorded resources,
so component tests assert on plain data after everything resolved: nothing is left un-awaited."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLURM_STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")]
    for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
    if "scheduler: slurm" in p.read_text()
)
"""Every shipped Slurm stack: tests that iterate over it check a new stack file unasked."""


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


def plan_stack(stack: str, *overrides: str):
    from clusterctl.plan.program import make_plan

    return make_plan(stack, list(overrides))


def resources(plan, type_: str, *, at_least: int = 1):
    """Resources of one type; fails below `at_least`, so no assertion loop runs empty."""
    found = plan.run.by_type(type_)
    assert len(found) >= at_least, f"expected >= {at_least} {type_}, found {len(found)}"
    return found


def need_tool(name: str) -> str:
    """Path of a real tool the test needs. In CI (CI=true) a missing tool fails the test."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; .ci/run must install it")
        pytest.skip(f"{name} not installed (run .ci/run, or apt-get install it)")
    return path


@pytest.fixture(autouse=True)
def _validation_history(tmp_path_factory, monkeypatch) -> Path:
    """Every test (and the commands it starts) keeps validation runs in a file of its own, never
    in the checkout's .clusterctl/ (clusterctl.validate.history)."""
    path = tmp_path_factory.mktemp("history") / "validate-history.sqlite"
    monkeypatch.setenv("GPU_CLUSTERS_VALIDATE_HISTORY", str(path))
    return path
