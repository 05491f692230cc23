"""The EKS (aws-p5) and AKS (aks-h100) stacks hardened: the API server reachable only from the
listed ranges, sign-in through the cloud's identity, the node role out of pods' reach, upgrades on
a stated policy; as spec rules and `clusterctl plan` behaviour (the component side:
tests/component/test_kubernetes_hardening.py)."""

from __future__ import annotations

import pytest

from clusterctl.project import config_dir
from tests.unit.spec.test_rules_kubernetes import errors_of, load_stack_spec, plan_cli

STACKS = ("aws-p5", "aks-h100")


@pytest.mark.parametrize(("stack", "api"), [("aws-p5", "EKS"), ("aks-h100", "AKS")])
def test_empty_api_server_cidrs_are_refused(stack: str, api: str) -> None:
    (line,) = errors_of(stack, "ssh.allowedCidrs=[]")
    assert line.startswith("gpu-clusters:cluster.ssh.allowedCidrs: ")
    assert f"the {api} API server" in line and "whole internet" in line


@pytest.mark.parametrize("stack", STACKS)
def test_plan_refuses_no_ssh_ranges_in_one_line_exit_2(stack: str) -> None:
    proc = plan_cli(config_dir(), "-s", stack, "--set", "ssh.allowedCidrs=[]")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert line.startswith("error: gpu-clusters:cluster.ssh.allowedCidrs: ")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("stack", STACKS)
def test_world_open_needs_the_explicit_flag(stack: str) -> None:
    (line,) = errors_of(stack, "ssh.allowedCidrs=[0.0.0.0/0]")
    assert line.startswith("gpu-clusters:cluster.ssh.allowedCidrs[0]: ")
    _, findings = load_stack_spec(
        stack, ["ssh.allowedCidrs=[0.0.0.0/0]", "ssh.allowWorldOpen=true"]
    )
    assert not [f for f in findings if f.level == "error"]


def test_admin_principals_on_aks_point_at_azure_rbac() -> None:
    arn = "arn:aws:iam::123456789012:role/x"
    (line,) = errors_of("aks-h100", f"kubernetes.adminPrincipalArns=[{arn}]")
    assert line.startswith("gpu-clusters:cluster.kubernetes.adminPrincipalArns: ")
    assert "Azure login" not in line
    assert "Azure Kubernetes Service RBAC Cluster Admin" in line


def test_plan_says_aks_needs_kubelogin() -> None:
    _, findings = load_stack_spec("aks-h100", [])
    assert any(f.level == "info" and "kubelogin" in f.message for f in findings)
    _, eks = load_stack_spec("aws-p5", [])
    assert not any("kubelogin" in f.message for f in eks)


def test_plan_states_each_clouds_upgrade_policy() -> None:
    _, eks = load_stack_spec("aws-p5", [])
    (line,) = [f.message for f in eks if "supportType" in f.message]
    assert "EKS 1.35 with supportType STANDARD (standard support until 2027-03-27)" in line
    _, aks = load_stack_spec("aks-h100", [])
    (line,) = [f.message for f in aks if "reimages nodes" in f.message]
    assert "Sundays 00:00 UTC for 4 h" in line
