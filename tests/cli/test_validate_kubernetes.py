"""`clusterctl validate --nccl` on Kubernetes stacks, run as the docs write it.

A stand-in kubectl (tests/fixtures/fake_kubectl) and pulumi sit on PATH; the project is a fresh
`clusterctl init` folder whose file backend holds a deployed stack's outputs (the plan's, with the
kubeconfig a secret, as Pulumi stores it). The ambient kubeconfig ($KUBECONFIG, ~/.kube/config)
points at another cluster: every kubectl call must name the stack's file instead.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests import docs_pages
from tests.conftest import plan_stack

ROOT = Path(__file__).resolve().parents[2]
FAKE_KUBECTL = ROOT / "tests" / "fixtures" / "fake_kubectl"
LOG = ROOT / "tests" / "data" / "nccl" / "nccl_tests_issue309_h100_2node.txt"
SECRET_SIG = "4dabf18193072939515e22adb298388d"
STACK_KUBECONFIG = "# the stack's own kubeconfig\napiVersion: v1\nkind: Config\n"


def kubernetes_validate_commands() -> list[str]:
    """Every `clusterctl validate` command the README or docs show for a Kubernetes cluster."""
    found = []
    for line in docs_pages.text().splitlines():
        m = re.match(r"^clusterctl (validate --nccl .*?)(\s+#.*)?$", line.strip())
        if m and re.search(r"--kubeconfig|-s (aws-p5|aks-h100)", m.group(1)):
            found.append(m.group(1).strip())
    return found


class Cluster:
    def __init__(self, tmp: Path, stack: str) -> None:
        self.tmp, self.stack = tmp, stack
        self.project = tmp / "project"
        self.calls_dir = tmp / "kubectl"
        self.calls_dir.mkdir()
        self.bin = tmp / "bin"
        self.bin.mkdir()
        subprocess.run(
            [sys.executable, "-m", "clusterctl", "init", "--example", stack, str(self.project)],
            check=True, capture_output=True, cwd=tmp,
        )  # fmt: skip
        outputs = dict(plan_stack(stack).run.outputs)
        outputs["kubeconfig"] = {SECRET_SIG: "1ba67a5f", "ciphertext": "encrypted"}
        state = self.project / ".pulumi-state" / ".pulumi" / "stacks" / "gpu-clusters"
        state.mkdir(parents=True)
        checkpoint = {"resources": [{"type": "pulumi:pulumi:Stack", "outputs": outputs}]}
        (state / f"{stack}.json").write_text(json.dumps({"checkpoint": {"latest": checkpoint}}))
        # `pulumi stack output kubeconfig --show-secrets` answers with the decrypted output
        pulumi = self.bin / "pulumi"
        pulumi.write_text(f"#!/bin/sh\ncat <<'KC'\n{STACK_KUBECONFIG}KC\n")
        pulumi.chmod(0o755)
        self.ambient = tmp / "ambient.kubeconfig"
        self.ambient.write_text("# another cluster: must not be used\n")
        (tmp / "home" / ".kube").mkdir(parents=True)
        (tmp / "home" / ".kube" / "config").write_text("# another cluster: must not be used\n")

    def run(self, args: list[str]) -> subprocess.CompletedProcess:
        env = {
            **os.environ,
            "PATH": f"{self.bin}:{FAKE_KUBECTL}:{os.environ['PATH']}",
            "FAKE_KUBECTL_DIR": str(self.calls_dir),
            "FAKE_KUBECTL_LOG": str(LOG),
            "KUBECONFIG": str(self.ambient),
            "HOME": str(self.tmp / "home"),
            "PYTHONPATH": str(ROOT),
        }
        return subprocess.run(
            [sys.executable, "-m", "clusterctl", *args],
            cwd=self.project, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    def calls(self) -> list[dict]:
        path = self.calls_dir / "calls.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def fill(cmd: str, cluster: Cluster) -> list[str]:
    mine = cluster.tmp / "mine.kubeconfig"
    mine.write_text("# a kubeconfig the user names\napiVersion: v1\nkind: Config\n")
    args = shlex.split(cmd)
    return [
        str(mine) if a in ("FILE", "~/.kube/config") else a for a in args
    ]  # `~/.kube/config` is the user's own file, given explicitly: allowed


def expected_kubeconfig(args: list[str], cluster: Cluster) -> str:
    if "--kubeconfig" in args:
        return args[args.index("--kubeconfig") + 1]
    return str(cluster.project / ".clusterctl" / f"{cluster.stack}.kubeconfig")


def test_the_readme_shows_kubernetes_validate_commands() -> None:
    cmds = kubernetes_validate_commands()
    assert any("--kubeconfig" in c and "-s " in c for c in cmds), cmds
    assert any("--kubeconfig" in c and "--sku" in c for c in cmds), cmds
    assert any(re.fullmatch(r"validate --nccl -s \S+", c) for c in cmds), cmds


@pytest.mark.parametrize("cmd", kubernetes_validate_commands())
def test_readme_kubernetes_validate_command_runs(cmd: str, tmp_path: Path) -> None:
    stack = m.group(1) if (m := re.search(r"-s (\S+)", cmd)) else "aws-p5"
    cluster = Cluster(tmp_path, stack)
    args = fill(cmd, cluster)
    proc = cluster.run(args)
    assert proc.returncode in (0, 1), f"{cmd}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
    calls = cluster.calls()
    assert calls, "kubectl was never called"
    want = expected_kubeconfig(args, cluster)
    for call in calls:
        argv = call["argv"]
        assert argv[argv.index("--kubeconfig") + 1] == want, argv
    # the MPIJob's namespace exists before the MPIJob is created in it
    kinds = [c["argv"][c["argv"].index("--kubeconfig") + 2] for c in calls]
    assert kinds.index("apply") < kinds.index("create"), kinds
    applied = json.loads(calls[kinds.index("apply")]["stdin"])["items"]
    created = json.loads(calls[kinds.index("create")]["stdin"])
    namespaces = {d["metadata"]["name"] for d in applied if d["kind"] == "Namespace"}
    assert created["metadata"]["namespace"] in namespaces
    # it says which kubeconfig it used
    assert f"kubeconfig: {want}" in proc.stderr, proc.stderr[-2000:]
    if want.endswith(".clusterctl/" + f"{stack}.kubeconfig"):
        assert Path(want).read_text().startswith("# the stack's own kubeconfig")
        assert oct(Path(want).stat().st_mode & 0o777) == "0o600"


def test_a_missing_kubeconfig_file_is_refused(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, "aws-p5")
    proc = cluster.run(
        ["validate", "--nccl", "--kubeconfig", str(tmp_path / "nope"), "-s", "aws-p5"]
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--kubeconfig" in proc.stderr, proc.stderr
