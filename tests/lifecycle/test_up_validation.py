"""`clusterctl up` shows the onDeploy NCCL verdict (read from the engine events, where the
post-deploy hook logs it) and writes a Kubernetes stack's kubeconfig; through the fake `pulumi`."""

from __future__ import annotations

import json
import shutil
import stat

from clusterctl.outputs import SlurmOutputs, type_problems, validation_line
from tests.lifecycle.conftest import FAKE, ROOT, STACK

PASS = {
    "verdict": "pass",
    "message": "NCCL validation pass: busbw 469.1 GB/s vs floor 300 (+56.4%)",
}
FAIL = {"verdict": "fail", "message": "NCCL validation fail: busbw 120.0 GB/s below the floor 300"}


def on_deploy(env, on_failure: str = "fail") -> None:
    path = env.project / "stacks" / f"Pulumi.{STACK}.yaml"
    text = path.read_text().replace("onDeploy: false", "onDeploy: true")
    path.write_text(text.replace("onFailure: fail", f"onFailure: {on_failure}"))


def test_up_shows_the_verdict_the_hook_logged(env):
    on_deploy(env)
    env.scenario(diagnostics=[{"severity": "info", "message": validation_line(PASS)}])

    result = env.invoke("up", "-s", STACK, "--yes")

    assert result.exit_code == 0, result.output
    assert "NCCL validation (onDeploy): pass" in result.output
    assert "469.1 GB/s vs floor 300" in result.output


def test_up_json_carries_the_verdict(env):
    on_deploy(env)
    env.scenario(diagnostics=[{"severity": "info", "message": validation_line(PASS)}])

    result = env.invoke("up", "-s", STACK, "--json", "--yes")

    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout[result.stdout.index("{") :])
    assert doc["validation"] == PASS
    assert "ncclValidation" not in doc["outputs"]  # a log line of the hook, not an output


def test_a_failed_verdict_fails_up_and_is_shown(env):
    on_deploy(env)
    env.scenario(
        diagnostics=[{"severity": "warning", "message": validation_line(FAIL)}],
        fail_up=f"after_create hook failed: {FAIL['message']}",
    )

    result = env.invoke("up", "-s", STACK, "--yes")

    assert result.exit_code == 1, result.output
    assert "NCCL validation (onDeploy): fail: NCCL validation fail" in result.output


def test_up_says_when_the_hook_did_not_run(env):
    on_deploy(env)  # an update that created no GPU nodes: the after_create hook does not fire

    result = env.invoke("up", "-s", STACK, "--yes")

    assert result.exit_code == 0, result.output
    assert "NCCL validation (onDeploy): did not run in this update" in result.output
    assert f"clusterctl validate --nccl -s {STACK}" in result.output


def test_without_on_deploy_up_says_nothing_about_validation(env):
    result = env.invoke("up", "-s", STACK, "--yes")

    assert result.exit_code == 0, result.output
    assert "NCCL validation" not in result.output


def test_up_writes_a_kubernetes_stacks_kubeconfig_0600(env):
    shutil.copy(ROOT / "stacks" / "Pulumi.aks-h100.yaml", env.project / "stacks")
    kubeconfig = "apiVersion: v1\nkind: Config\nclusters: []\n"
    env.scenario(outputs={"scheduler": "kubernetes", "kubeconfig": {"secret": kubeconfig}})

    result = env.invoke("up", "-s", "aks-h100", "--json", "--yes")

    assert result.exit_code == 0, result.output
    path = env.project / ".clusterctl" / "aks-h100.kubeconfig"
    assert path.read_text() == kubeconfig and stat.S_IMODE(path.stat().st_mode) == 0o600
    doc = json.loads(result.stdout[result.stdout.index("{") :])
    assert doc["kubeconfigFile"] == str(path) and doc["outputs"]["kubeconfig"] == "[secret]"


def test_the_fakes_recorded_outputs_follow_the_contract():
    text = (FAKE.parent / "recorded" / "outputs.json").read_text().replace("{stack}", STACK)
    doc = json.loads(text)
    doc["sshPrivateKey"] = doc["sshPrivateKey"]["secret"]
    assert type_problems(doc, SlurmOutputs) == []
