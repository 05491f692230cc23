"""The all-node run is judged twice: Ring against the Ring lines, and NCCL's default algorithm
(NCCL_ALGO unset) against the catalog's default-algorithm lines where it has them; where it has
none the default run is reported and not judged, with the reason. A log says which algorithm it
ran in NCCL's own ENV lines, and one that does not say is taken for neither."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from clusterctl.nccl.parse import parse_all_reduce
from clusterctl.validate.k8s_launcher import build_mpijob
from clusterctl.validate.run import Options, outcome_json, validate_log, validate_slurm
from clusterctl.validate.slurm_launcher import JobResult, SlurmJob, render_sbatch
from clusterctl.validate.targets import LogTarget, launcher_for_sku, stack_target
from tests.data.nccl.derive_algorithm import with_env
from tests.data.nccl.derive_fabric_margin import efa_log, ib_log
from tests.validate.conftest import DATA
from tests.validate.test_fabric_proof import env_at_srun, k8s_outcome
from tests.validate.test_slurm import H100_OUTPUTS, h100_job

H100, A100 = "Standard_ND96isr_H100_v5", "Standard_ND96asr_v4"


# --- what a log says it ran ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "algorithm"),
    [
        (with_env(ib_log(381.4), "Ring"), "Ring"),
        (with_env(ib_log(381.4), "ring"), "Ring"),
        (with_env(ib_log(381.4), "ring,tree"), "ring,tree"),
        (with_env(ib_log(381.4), None), "default"),  # ENV lines, none for NCCL_ALGO: unset
        (ib_log(381.4), None),  # INIT,NET only: the log does not say
        ((DATA / "nccl_tests_issue309_h100_2node.txt").read_text(), None),
        # Open MPI --tag-output on every line
        ("".join(f"[1,0]<stdout>:{ln}\n" for ln in with_env(ib_log(381.4), "Ring").splitlines()),
         "Ring"),
    ],
    ids=["ring", "ring-lower", "list", "unset", "no-env-lines", "no-info-lines", "ompi-tags"],
)  # fmt: skip
def test_a_log_says_its_algorithm_in_nccls_env_lines(text, algorithm) -> None:
    assert parse_all_reduce(text).algorithm == algorithm


def test_the_probe_prints_the_algorithm_line_as_nccl_does() -> None:
    from clusterctl.nccl.algorithm import algorithm_in
    from clusterctl.probe.netinfo import env_lines

    assert algorithm_in(env_lines("node1", {"NCCL_ALGO": "Ring"}, pid=7)) == "Ring"
    assert env_lines("node1", {}, pid=7) == []  # unset: NCCL prints nothing, nor does the probe


# --- --from-log: judged against the lines of the algorithm it ran -------------------------------


def _gpus(text: str, name: str) -> str:
    """The same log from other GPUs (`--from-log` refuses a --sku of another GPU model)."""
    return text.replace("NVIDIA H100 80GB HBM3", name)


def _from_log(tmp_path: Path, sku: str, text: str):
    path = tmp_path / "run.log"
    path.write_text(text)
    return validate_log(LogTarget(path, sku, 2), Options())


def _messages(v) -> str:
    return " | ".join(f.message for f in v.findings)


@pytest.mark.parametrize(
    ("sku", "text", "status", "said"),
    [
        # 381 GB/s clears the Ring lines (fail 338) but not NCCL's default choice's (fail 396)
        (H100, with_env(ib_log(381.4), None), "fail", "below the floor 396 GB/s"),
        (H100, with_env(ib_log(469.1), None), "pass", "expected 450 GB/s (measured)"),
        (H100, with_env(ib_log(410.0), None), "warn", "below the warning level 418.5"),
        (H100, with_env(ib_log(381.4), "Ring"), "pass", "expected 384 GB/s (derived)"),
        ("p5.48xlarge", with_env(efa_log(420.0), None, param="NCCL_BUFFSIZE"), "fail",
         "below the floor 428.6 GB/s"),
        ("p5.48xlarge", with_env(efa_log(487.1), None, param="NCCL_BUFFSIZE"), "pass",
         "expected 487.09 GB/s (measured)"),
        ("Standard_ND96isr_H200_v5", _gpus(with_env(ib_log(381.4), None), "NVIDIA H200"), "fail",
         "expected 450 GB/s (derived)"),
    ],
    ids=["h100-default-low", "h100-default-ok", "h100-default-warn", "h100-ring", "p5-default-low",
         "p5-default-ok", "h200-default-low"],
)  # fmt: skip
def test_a_log_is_judged_against_the_lines_of_the_algorithm_it_ran(
    tmp_path, sku, text, status, said
) -> None:
    (v,) = _from_log(tmp_path, sku, text).verdicts
    assert v.status == status, v.reasons
    assert said in _messages(v)
    assert v.algorithm == parse_all_reduce(text).algorithm


def test_a_default_log_without_a_catalog_figure_is_held_to_the_ring_lines_and_says_so(
    tmp_path,
) -> None:
    log = _gpus(with_env(ib_log(186.0), None), "NVIDIA A100-SXM4-80GB")
    (v,) = _from_log(tmp_path, A100, log).verdicts
    assert v.status == "pass" and v.thresholds.fail_below_gbps == 180.0
    assert "has no default-algorithm figure for Standard_ND96asr_v4" in _messages(v)
    assert "held to the Ring lines" in _messages(v)


def test_a_log_of_another_forced_algorithm_warns_that_the_lines_are_ring_ones(tmp_path) -> None:
    (v,) = _from_log(tmp_path, H100, with_env(ib_log(381.4), "Tree")).verdicts
    assert v.status == "warn"
    assert (
        "the log ran NCCL_ALGO=Tree" in v.reasons[0]
        and "judged against the Ring lines" in (v.reasons[0])
    )


def test_a_log_that_does_not_say_is_judged_on_the_ring_lines_and_says_what_is_unknown(
    tmp_path,
) -> None:
    (v,) = _from_log(tmp_path, H100, ib_log(381.4)).verdicts
    assert v.status == "pass" and v.thresholds.fail_below_gbps == 338.0 and v.algorithm is None
    assert "does not say which algorithm ran" in _messages(v)
    assert "NCCL's default choice is expected at 450 GB/s" in _messages(v)


# --- live runs: the all-node job twice ----------------------------------------------------------


class Launcher:
    """A Slurm launcher stand-in: the Ring job prints `ring`, the default-algorithm job
    `default` (None: no output), pairs print `ring`."""

    def __init__(self, ring: str, default: str | None) -> None:
        self.ring, self.default = ring, default
        self.jobs: list[SlurmJob] = []

    def run(self, job, *, timeout_s=None):
        self.jobs.append(job)
        text = self.default if job.algorithm == "default" else self.ring
        return JobResult(str(len(self.jobs)), "COMPLETED", text or "")

    def run_many(self, jobs, *, timeout_s=None):
        return [self.run(j) for j in jobs]


def _target(sku: str = H100):
    part = {**H100_OUTPUTS["partitions"][0], "sku": sku}  # type: ignore[index]
    return stack_target("azure-h100", {**H100_OUTPUTS, "partitions": [part]})


def _live(sku: str, ring: str, default: str | None, **opts):
    launcher = Launcher(ring, default)
    outcome = validate_slurm(_target(sku), Options(**opts), launcher=launcher)
    return outcome, launcher


def test_the_all_node_run_is_judged_twice_ring_and_default() -> None:
    outcome, launcher = _live(H100, ib_log(381.4), ib_log(381.4))
    assert [j.algorithm for j in launcher.jobs] == ["Ring", "default"]
    assert [j.nodes for j in launcher.jobs] == [2, 2]
    assert launcher.jobs[0].max_bytes == launcher.jobs[1].max_bytes  # same sizes
    (ring,) = outcome.verdicts
    assert ring.status == "pass" and ring.algorithm == "Ring"
    d = outcome.default_algorithm
    assert d is not None and d.verdict is not None and d.status == "fail"
    assert d.verdict.thresholds.fail_below_gbps == 396.0
    assert outcome.status == "fail" and outcome.exit_code == 1
    data = outcome_json(outcome)
    assert data["groups"][0]["algorithm"] == "Ring" and data["groups"][0]["status"] == "pass"
    dj = data["default_algorithm"]
    assert (dj["algorithm"], dj["judged"], dj["status"]) == ("default", True, "fail")
    assert dj["group"]["thresholds"]["expected_gbps"] == 450.0
    assert "below the floor 396 GB/s" in dj["reasons"][0]


def test_both_runs_healthy_pass() -> None:
    outcome, _ = _live(H100, ib_log(381.4), ib_log(469.1))
    assert outcome.status == "pass" and outcome.default_algorithm.status == "pass"  # type: ignore[union-attr]


def test_without_a_catalog_figure_the_default_run_is_reported_not_judged() -> None:
    outcome, launcher = _live(A100, ib_log(187.0), ib_log(186.0))
    assert len(launcher.jobs) == 2
    d = outcome.default_algorithm
    assert d is not None and d.verdict is None and d.status == "not judged"
    assert "no default-algorithm figure for Standard_ND96asr_v4" in d.why_not
    assert "busbw 186.00 GB/s at 16 GiB: not judged" in d.line()
    assert outcome.status == "pass"  # the Ring verdict's; the default run turns nothing
    dj = outcome_json(outcome)["default_algorithm"]
    assert (dj["judged"], dj["status"], dj["group"]) == (False, "not judged", None)
    assert dj["measured_busbw_gbps"] == pytest.approx(186.0, abs=0.01)


def test_an_unjudged_default_run_with_a_wrong_result_still_fails() -> None:
    wrong = (DATA / "derived_wrong_oob_failed.txt").read_text()
    outcome, _ = _live(A100, ib_log(187.0), wrong)
    d = outcome.default_algorithm
    assert d is not None and d.verdict is None and d.status == "fail"
    assert any("wrong elements" in f.message for f in d.checks)
    assert outcome.status == "fail"


def test_a_default_run_whose_log_says_ring_is_not_taken_for_the_default() -> None:
    """An image's /etc/nccl.conf can set NCCL_ALGO for every job; `unset` does not undo that."""
    outcome, _ = _live(H100, ib_log(381.4), with_env(ib_log(381.4), "Ring"))
    d = outcome.default_algorithm
    assert d is not None and d.verdict is None and d.status == "not judged"
    assert "the log says it ran NCCL_ALGO=Ring" in d.why_not
    assert outcome.status == "pass"


@pytest.mark.parametrize(("sku", "status"), [(H100, "inconclusive"), (A100, "pass")])
def test_a_default_run_without_output_is_inconclusive_where_it_would_be_judged(sku, status) -> None:
    outcome, _ = _live(sku, ib_log(469.1 if sku == H100 else 187.0), None)
    d = outcome.default_algorithm
    assert d is not None and "the run gave no result" in d.why_not
    assert outcome.status == status


def test_the_default_run_can_be_left_out() -> None:
    outcome, launcher = _live(H100, ib_log(381.4), ib_log(381.4), default_algorithm=False)
    assert [j.algorithm for j in launcher.jobs] == ["Ring"] and outcome.default_algorithm is None
    assert outcome.status == "pass"


# --- what the jobs run ---------------------------------------------------------------------------


@pytest.mark.parametrize("benchmark", ["nccl-tests", "probe"])
def test_the_default_job_unsets_nccl_algo_whatever_the_environment_says(
    tmp_path, benchmark
) -> None:
    base = h100_job(container_image="nvcr.io/nvidia/pytorch:24.07-py3", benchmark=benchmark)
    base = replace(base, env={**base.env, "NCCL_ALGO": "Tree"})  # a profile or stack sets it
    ring = env_at_srun(render_sbatch(base, "o.out"), tmp_path)
    default = env_at_srun(render_sbatch(replace(base, algorithm="default"), "o.out"), tmp_path)
    assert ring["NCCL_ALGO"] == "Ring"
    assert "NCCL_ALGO" not in default
    if benchmark == "nccl-tests":  # the ENV subsystem: the log says which algorithm ran
        assert ring["NCCL_DEBUG_SUBSYS"] == default["NCCL_DEBUG_SUBSYS"] == "INIT,NET,ENV"


@pytest.mark.parametrize("sku", [H100, "p5.48xlarge"])
def test_the_default_mpijob_runs_without_nccl_algo(sku) -> None:
    launcher = launcher_for_sku(sku, 2)
    launcher = {**launcher, "env": {**launcher.get("env", {}), "NCCL_ALGO": "Tree"}}
    for algorithm, want in (("Ring", "Ring"), ("default", None)):
        m = build_mpijob(launcher, algorithm=algorithm)
        (c,) = m["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"]
        env = {e["name"]: e["value"] for e in c["env"]}
        forwarded = [c["args"][i + 1] for i, a in enumerate(c["args"]) if a == "-x"]
        assert env.get("NCCL_ALGO") == want and ("NCCL_ALGO" in forwarded) == (want is not None)
        assert env["NCCL_DEBUG_SUBSYS"] == "INIT,NET,ENV"


@pytest.mark.parametrize(
    ("sku", "default_log", "status"),
    [(H100, ib_log(381.4), "fail"), (H100, ib_log(469.1), "pass"),
     ("p5.48xlarge", efa_log(400.0), "fail"), ("p5.48xlarge", efa_log(487.1), "pass")],
)  # fmt: skip
def test_kubernetes_runs_the_default_mpijob_and_judges_it(
    sku, default_log, status, monkeypatch
) -> None:
    ring = ib_log(381.4) if sku == H100 else efa_log(368.5)
    outcome = k8s_outcome(sku, ring, monkeypatch, default_log=default_log)
    (v,) = outcome.verdicts
    assert v.status == "pass" and v.algorithm == "Ring"
    assert outcome.default_algorithm is not None and outcome.default_algorithm.judged
    assert outcome.status == status


def test_one_node_runs_no_default_run() -> None:
    """One node is NVLink with NCCL's own choice already (the single-node baseline)."""
    part = {**H100_OUTPUTS["partitions"][0], "nodes": 1}  # type: ignore[index]
    launcher = Launcher((DATA / "nccl_tests_issue309_h100_2node.txt").read_text(), None)
    outcome = validate_slurm(
        stack_target("azure-h100", {**H100_OUTPUTS, "partitions": [part]}),
        Options(),
        launcher=launcher,
    )
    assert "default" not in [j.algorithm for j in launcher.jobs]
    assert outcome.default_algorithm is None


def test_a_deploy_that_fails_only_on_the_default_algorithm_says_so() -> None:
    from clusterctl.spec.model import NcclValidationSpec
    from clusterctl.validate.hook import post_deploy_check

    outcome, _ = _live(H100, ib_log(381.4), ib_log(381.4))
    got = post_deploy_check(
        {}, NcclValidationSpec(on_deploy=True, on_failure="fail"), lambda o, n: outcome
    )
    assert got.verdict == "fail" and got.fail_update
    assert "NCCL's default algorithm (NCCL_ALGO unset): busbw 381.40 GB/s at 16 GiB: fail" in (
        got.message
    )


@pytest.mark.parametrize(("env", "said"), [("Ring", "Ring"), (None, None)])
def test_the_probes_log_says_the_algorithm_it_was_given(monkeypatch, env, said) -> None:
    """The sandbox's stand-in for nccl-tests, two ranks as srun starts them: with NCCL_ALGO set
    its log carries NCCL's line; unset, nothing (NCCL prints nothing for an unset variable)."""
    from tests.validate.test_probe import finish, spawn

    if env is None:
        monkeypatch.delenv("NCCL_ALGO", raising=False)
    else:
        monkeypatch.setenv("NCCL_ALGO", env)
    res = finish(spawn(2, "-b", "4K", "-e", "8K", "-n", "1", "-w", "0"))
    assert [rc for rc, _, _ in res] == [0, 0], [e for _, _, e in res]
    assert parse_all_reduce(res[0][1] + res[1][1]).algorithm == said
