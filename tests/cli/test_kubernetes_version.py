"""kubernetes.version is checked before anything is created: its form, a number YAML made of it,
and the minors the cloud offers, each as one line naming the field and the fix."""

from __future__ import annotations

import pytest

from tests.cli.conftest import error_lines, run_cli

FIELD = "gpu-clusters:cluster.kubernetes.version"


@pytest.mark.parametrize(
    ("stack", "value", "words"),
    [
        ("aks-h100", "abc", "'abc' is not a Kubernetes version: MAJOR.MINOR like \"1.35\""),
        ("aws-p5", "v1.35", "'v1.35' is not a Kubernetes version"),
        ("aks-h100", "1.34", "1.34 is a number: write the version as a string"),
        ("aks-h100", "1.30", "--set 'kubernetes.version=\"1.35\"'"),
        ("aks-h100", '"1.25"', "1.25 is older than AKS supports (1.33 to 1.35"),
        ("aws-p5", '"1.25"', "1.25 is older than EKS supports"),
        ("aws-p5", '"1.35.6"', 'EKS takes MAJOR.MINOR (e.g. "1.35")'),
    ],
)
def test_a_bad_kubernetes_version_is_one_line_with_the_fix(stack, value, words) -> None:
    res = run_cli("plan", "-s", stack, "--set", f"kubernetes.version={value}")
    assert res.returncode == 2, res.stderr
    (line,) = [x for x in error_lines(res.stderr) if x.startswith("error:")]
    assert line.startswith(f"error: {FIELD}: ") and words in line, line


@pytest.mark.parametrize(("stack", "value"), [("aks-h100", '"1.35.6"'), ("aws-p5", '"1.34"')])
def test_a_supported_kubernetes_version_plans(cli, stack, value) -> None:
    res = cli("plan", "-s", stack, "--set", f"kubernetes.version={value}")
    assert res.exit_code == 0, res.output


def test_a_version_newer_than_the_catalog_knows_is_a_warning_naming_the_check(cli) -> None:
    res = cli("plan", "-s", "aks-h100", "--set", 'kubernetes.version="1.36"')
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert f"warning: {FIELD}: 1.36 is newer than 1.35" in text
    assert "az aks get-versions -l eastus" in text
