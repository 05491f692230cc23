"""The post-deploy check: with `validation.nccl.onDeploy: true`, `pulumi up` validates the cluster
once its compute nodes exist and either fails the update or warns (`onFailure`).

`post_deploy_check` is the function (tested directly: Pulumi hooks never fire under mocks);
`run_post_deploy` is the after_create hook's body, which the entry point that runs the program
(__main__.py, `clusterctl plan`) hands to the cluster component. The verdict
cannot be a stack output (the outputs are decided before the hook runs): the hook logs it as one
`ncclValidation {...}` line, which `clusterctl up` reads from the engine events (see
clusterctl/outputs.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from clusterctl.outputs import NcclValidationResult, validation_line
from clusterctl.spec.model import ClusterSpec, NcclValidationSpec
from clusterctl.validate import CouldNotRun

Verdict = Literal["pass", "warn", "fail", "skipped"]
Validator = Callable[[Mapping[str, Any], NcclValidationSpec], Any]  # returns a run.Outcome


@dataclass(frozen=True)
class HookVerdict:
    verdict: Verdict
    message: str
    fail_update: bool

    def as_result(self) -> NcclValidationResult:
        """What `clusterctl up` shows: logged by the hook as `validation_line(...)`."""
        return {"verdict": self.verdict, "message": self.message}


def post_deploy_check(
    outputs: Mapping[str, Any],
    nccl: NcclValidationSpec,
    validator: Validator,
    keep: Callable[[Any], None] | None = None,
) -> HookVerdict:
    """Run the validation on a fresh cluster and turn its outcome into the update's verdict;
    `keep` puts the run into the stack's validation history (as `validate -s` does). A history
    that cannot be written is said in the verdict's message, never costs the verdict."""
    if not nccl.on_deploy:
        return HookVerdict(
            "skipped", "NCCL validation on deploy is off (validation.nccl.onDeploy)", False
        )
    try:
        outcome = validator(outputs, nccl)
    except CouldNotRun as exc:
        status, detail = "inconclusive", f"could not run: {exc}"
    else:
        status = outcome.status
        detail = _summary(outcome)
        if keep is not None:
            try:
                keep(outcome)
            except Exception as exc:  # a history problem must not fail the update
                detail += f"; not kept in the validation history: {exc}"
    if status in ("pass", "warn"):
        passed: Literal["pass", "warn"] = "pass" if status == "pass" else "warn"
        return HookVerdict(passed, f"NCCL validation {status}: {detail}", False)
    if nccl.on_failure == "fail":
        return HookVerdict("fail", f"NCCL validation {status}: {detail}", True)
    return HookVerdict(
        "warn", f"NCCL validation {status} (onFailure: warn, the update goes on): {detail}", False
    )


def _summary(outcome: Any) -> str:
    parts = []
    for v in outcome.verdicts:
        if v.measured_busbw_gbps is not None:
            parts.append(
                f"busbw {v.measured_busbw_gbps:.1f} GB/s vs floor {v.thresholds.fail_below_gbps:g}"
                f" ({v.margin_pct:+.1f}%)"
            )
        parts += list(v.reasons)
    default = outcome.default_algorithm
    if default is not None and default.status in ("fail", "warn", "inconclusive"):
        parts.append(default.line())
    if outcome.sweep is not None:
        parts += [f"suspect {s.node} ({s.status})" for s in outcome.sweep.localization.suspects]
    return "; ".join(dict.fromkeys(parts)) or "no figures"


def validate_stack_outputs(
    spec: ClusterSpec, stack: str
) -> Validator:  # pragma: no cover - needs a live cluster
    """The validator `pulumi up` uses: the same path as `clusterctl validate --nccl -s STACK`."""

    def run(outputs: Mapping[str, Any], nccl: NcclValidationSpec) -> Any:
        from clusterctl.validate.run import Options, validate, with_stack_overrides
        from clusterctl.validate.targets import stack_target

        target = stack_target(stack, dict(outputs))
        opts = with_stack_overrides(Options(), nccl, f"stack {stack} validation.nccl")
        return validate(target, opts)

    return run


def keep_in_history(stack: str) -> Callable[[Any], None]:
    """The hook's `keep`: the project's history file (the program runs in the project), or
    $GPU_CLUSTERS_VALIDATE_HISTORY; source "onDeploy"."""

    def keep(outcome: Any) -> None:
        from datetime import UTC, datetime

        from clusterctl.validate.history import project_history

        at = datetime.now(UTC).replace(microsecond=0).isoformat()
        project_history().record_outcome(stack, outcome, at=at, source="onDeploy")

    return keep


def run_post_deploy(spec: ClusterSpec, stack: str, outputs: Mapping[str, Any]) -> None:
    """The after_create hook's body: validate the fresh cluster, log the verdict as one
    `ncclValidation {...}` line and raise when it must fail the update. The cluster component
    binds it to its last compute resource (components/azure/slurm/slurm_cluster.py) with
    ResourceHookOptions(ignore_errors=True) for onFailure: warn; `outputs` are the stack
    outputs, resolved by the time the hook runs."""
    import pulumi

    nccl = spec.validation.nccl
    result = post_deploy_check(
        outputs, nccl, validate_stack_outputs(spec, stack), keep_in_history(stack)
    )
    log = {"pass": pulumi.log.info, "skipped": pulumi.log.info}.get(result.verdict, pulumi.log.warn)
    log(validation_line(result.as_result()))
    if result.fail_update:
        raise RuntimeError(result.message)
