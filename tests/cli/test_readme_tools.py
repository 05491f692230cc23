"""The cloud path's page (docs/cloud-path.md) names every program `pulumi up` runs on the user's
machine.

The EKS kubeconfig authenticates with an exec plugin (`aws eks get-token`): the Kubernetes
provider runs it during `pulumi up` to install the add-ons, so without the AWS CLI on PATH the
update fails half-way. The test reads the command from the plan's own kubeconfig output, so a
different plugin would need its own line on that page too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import plan_stack

CLOUD_PATH = Path(__file__).resolve().parents[2] / "docs" / "cloud-path.md"


def cloud_path_steps() -> str:
    text = CLOUD_PATH.read_text()
    assert text.startswith("# The real cloud path"), "docs/cloud-path.md lost its steps"
    return text


def test_readme_says_eks_pulumi_up_runs_the_aws_cli() -> None:
    kubeconfig = json.loads(plan_stack("aws-p5").run.outputs["kubeconfig"])
    (user,) = kubeconfig["users"]
    command = user["user"]["exec"]["command"]
    assert command == "aws"
    steps = cloud_path_steps()
    assert re.search(r"AWS CLI.{0,200}`pulumi up`|`pulumi up`.{0,200}AWS CLI", steps, re.S), (
        "docs/cloud-path.md does not say that `pulumi up` on EKS runs the AWS CLI"
    )
    assert "aws eks get-token" in steps
