"""The post-deploy hook's function, called directly (Pulumi hooks never fire under mocks)."""

from __future__ import annotations

import pytest

from clusterctl.nccl.judge import Thresholds, judge
from clusterctl.nccl.parse import parse_all_reduce
from clusterctl.outputs import parse_validation_line, validation_line
from clusterctl.spec.model import NcclValidationSpec
from clusterctl.validate import CouldNotRun
from clusterctl.validate.hook import post_deploy_check
from clusterctl.validate.run import Outcome
from tests.validate.conftest import DATA

OUTPUTS = {"schedulerAddress": "20.1.2.3", "adminUser": "azureuser"}
RUN = parse_all_reduce((DATA / "nccl_tests_issue309_h100_2node.txt").read_text())


def outcome(floor: float, warn: float | None = None) -> Outcome:
    return Outcome([judge(RUN, Thresholds(floor, warn, 16 << 30, "catalog"))])


def validator(result):
    seen = []

    def run(outputs, nccl):
        seen.append(outputs)
        if isinstance(result, Exception):
            raise result
        return result

    run.seen = seen  # type: ignore[attr-defined]
    return run


def spec(**kw) -> NcclValidationSpec:
    return NcclValidationSpec(on_deploy=True, **kw)


def test_off_means_skipped_and_nothing_runs() -> None:
    v = validator(outcome(300))
    r = post_deploy_check(OUTPUTS, NcclValidationSpec(on_deploy=False), v)
    assert (r.verdict, r.fail_update) == ("skipped", False) and v.seen == []


def test_pass_reports_the_figure() -> None:
    v = validator(outcome(300))
    r = post_deploy_check(OUTPUTS, spec(), v)
    assert (r.verdict, r.fail_update) == ("pass", False)
    assert "469.1 GB/s vs floor 300" in r.message and v.seen == [OUTPUTS]
    assert r.as_result() == {"verdict": "pass", "message": r.message}
    assert parse_validation_line(validation_line(r.as_result())) == r.as_result()


def test_warn_level_warns_without_failing() -> None:
    r = post_deploy_check(OUTPUTS, spec(), validator(outcome(300, 480)))
    assert (r.verdict, r.fail_update) == ("warn", False)


@pytest.mark.parametrize(
    ("on_failure", "verdict", "fails"), [("fail", "fail", True), ("warn", "warn", False)]
)
def test_failure_fails_or_warns_per_on_failure(on_failure, verdict, fails) -> None:
    r = post_deploy_check(OUTPUTS, spec(on_failure=on_failure), validator(outcome(500)))
    assert (r.verdict, r.fail_update) == (verdict, fails)
    assert "below the floor 500" in r.message
    if on_failure == "warn":
        assert "onFailure: warn" in r.message


@pytest.mark.parametrize(("on_failure", "fails"), [("fail", True), ("warn", False)])
def test_could_not_run_follows_on_failure(on_failure, fails) -> None:
    err = CouldNotRun("cannot reach azureuser@20.1.2.3 over ssh: Connection timed out")
    r = post_deploy_check(OUTPUTS, spec(on_failure=on_failure), validator(err))
    assert r.fail_update is fails and "could not run: cannot reach" in r.message


def test_the_deploy_run_is_kept_in_the_stacks_history(_validation_history) -> None:
    """Every validate run is kept per stack, the one `pulumi up` runs too (source
    onDeploy), through the project's history file ($GPU_CLUSTERS_VALIDATE_HISTORY here)."""
    from clusterctl.validate.history import History
    from clusterctl.validate.hook import keep_in_history

    r = post_deploy_check(OUTPUTS, spec(), validator(outcome(100)), keep_in_history("azure-h100"))
    assert r.verdict == "pass" and "not kept" not in r.message
    (run,) = History(_validation_history).runs("azure-h100")
    assert run.source == "onDeploy" and run.status == "pass" and run.busbw_gbps


def test_a_history_that_cannot_be_written_is_said_and_costs_no_verdict(tmp_path) -> None:
    def broken(_outcome) -> None:
        raise OSError("read-only file system")

    r = post_deploy_check(OUTPUTS, spec(), validator(outcome(100)), broken)
    assert r.verdict == "pass" and not r.fail_update
    assert "not kept in the validation history: read-only file system" in r.message
