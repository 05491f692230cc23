"""The Pulumi program `pulumi up -s <stack>` runs: stack config -> spec -> components -> outputs."""

import pulumi

from clusterctl.errors import UserError
from clusterctl.spec.load import load_spec
from clusterctl.spec.model import CONFIG_NAMESPACE
from components.program import run

try:
    spec, findings = load_spec(pulumi.Config(CONFIG_NAMESPACE).require_object("cluster"))
except UserError as exc:
    for problem in exc.problems:
        pulumi.log.error(problem)
    raise pulumi.RunError("the stack config is invalid; see the errors above") from None
for finding in findings:
    if finding.level == "warning":
        pulumi.log.warn(finding.line())
run(spec, pulumi.get_stack())
