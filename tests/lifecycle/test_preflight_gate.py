"""A bare `pulumi up` of an Azure stack skips every check `clusterctl up` makes first (size
offered, vCPU quota, role permissions), so the program refuses to run unless `clusterctl up`
drives it (it tells the program its checks passed) or the user says why the checks are skipped."""

from __future__ import annotations

from clusterctl.lifecycle.gate import PREFLIGHT_ENV, SKIP_ENV, bare_run_refusal
from tests.lifecycle.conftest import STACK, Env


def test_a_bare_run_of_an_azure_stack_is_refused_with_how_to_go_on() -> None:
    refusal = bare_run_refusal("azure", STACK, {})
    assert refusal and "\n" not in refusal
    assert f"clusterctl up -s {STACK}" in refusal and SKIP_ENV in refusal


def test_clusterctl_ups_mark_or_a_reason_lets_it_run() -> None:
    assert bare_run_refusal("azure", STACK, {PREFLIGHT_ENV: STACK}) is None
    assert bare_run_refusal("azure", STACK, {SKIP_ENV: "quota raised, ticket 42"}) is None
    # the mark is per stack, and an empty reason is no reason
    assert bare_run_refusal("azure", STACK, {PREFLIGHT_ENV: "azure-a100"})
    assert bare_run_refusal("azure", STACK, {SKIP_ENV: "  "})


def test_a_cloud_with_no_preflight_runs_bare() -> None:
    assert bare_run_refusal("aws", "aws-p5", {}) is None


def test_clusterctl_up_tells_the_program_its_checks_passed(env: Env) -> None:
    result = env.invoke("up", "-s", STACK, "--yes")
    assert result.exit_code == 0, result.output
    runs = [c for c in env.raw_calls() if {"preview", "up"} & set(c["argv"])]
    assert runs and all(c["env"].get(PREFLIGHT_ENV) == STACK for c in runs)


def test_no_mark_when_the_checks_fail(env: Env) -> None:
    env.capacity.answer = (env.capacity.ROOM[0], [])  # no quota rows: up stops before preview
    result = env.invoke("up", "-s", STACK, "--yes")
    assert result.exit_code != 0
    assert not [c for c in env.calls() if {"preview", "up"} & set(c)]


def test_the_program_calls_the_gate_before_it_builds_anything() -> None:
    from tests.lifecycle.conftest import ROOT

    text = (ROOT / "__main__.py").read_text()
    assert text.index("bare_run_refusal(") < text.index("\nrun(spec")
