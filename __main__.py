"""The Pulumi program `pulumi up -s <stack>` runs: stack config -> spec -> components -> outputs."""

import os

import pulumi

from clusterctl.errors import UserError
from clusterctl.lifecycle.gate import SKIP_ENV, bare_run_refusal, skipped_reason
from clusterctl.platform import scheduler_of
from clusterctl.spec.load import load_spec
from clusterctl.spec.model import CONFIG_NAMESPACE, ClusterSpec
from components.program import run


def post_deploy(spec: ClusterSpec, stack: str, outputs: dict) -> None:
    """validation.nccl.onDeploy's check, bound here rather than in the program: its code (and
    the validation's) loads only when the hook fires, after the last scale set exists."""
    from clusterctl.validate.hook import run_post_deploy

    run_post_deploy(spec, stack, outputs)


try:
    spec, findings = load_spec(pulumi.Config(CONFIG_NAMESPACE).require_object("cluster"))
except UserError as exc:
    for problem in exc.problems:
        pulumi.log.error(problem)
    raise pulumi.RunError("the stack config is invalid; see the errors above") from None
refusal = bare_run_refusal(spec.cloud, pulumi.get_stack(), os.environ)
if refusal:
    pulumi.log.error(refusal)
    raise pulumi.RunError(refusal)
if skipped_reason(os.environ):
    pulumi.log.warn(f"preflight skipped ({SKIP_ENV}): {skipped_reason(os.environ)}")
for finding in findings:
    if finding.level == "warning":
        pulumi.log.warn(finding.line())
hooked = spec.validation.nccl.on_deploy and scheduler_of(spec.scheduler).head_node
run(spec, pulumi.get_stack(), post_deploy=post_deploy if hooked else None)
