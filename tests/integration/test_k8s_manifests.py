"""Every manifest `clusterctl plan --out` writes under k8s/ passes kubernetes-validate --strict.

kubernetes-validate carries only the built-in Kubernetes schemas: a custom resource (MPIJob,
NicClusterPolicy, Kueue's queues) gets a "schema not found" WARN, not an error. So the test runs
it strictly over every file and then requires the WARNs to be exactly the expected custom kinds,
which catches a built-in object whose apiVersion or kind went wrong.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterctl.render.kubernetes import render_k8s_bundle
from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes import kubernetes_version
from clusterctl.spec.load import load_stack_spec
from tests.conftest import need_tool

pytestmark = pytest.mark.integration

CUSTOM_KINDS = {
    "MPIJob", "NicClusterPolicy", "NodeFeatureRule", "ResourceFlavor", "ClusterQueue", "LocalQueue",
}  # fmt: skip
CASES = [
    ("aws-p5", []),
    ("aws-p5", ["kubernetes.kueue=true", "kubernetes.gpuDriver=managed"]),
    ("aws-p5", ["kubernetes.sharedFilesystem.kind=lustre"]),  # the FSx volume and its claim
    ("aks-h100", []),
    ("aks-h100", ["kubernetes.gpuDriver=managed", "kubernetes.kueue=true"]),
]


def kubernetes_validate() -> str:
    beside = Path(sys.executable).parent / "kubernetes-validate"
    return str(beside) if beside.exists() else need_tool("kubernetes-validate")


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_manifests_validate(tmp_path: Path, stack: str, overrides: list[str]) -> None:
    tool = kubernetes_validate()
    spec, _ = load_stack_spec(stack, overrides)
    files = render_k8s_bundle(spec, stack)
    manifests = [rel for rel in files if not rel.startswith("helm/")]
    assert len(manifests) >= 2
    paths = []
    for rel in manifests:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[rel])
        paths.append(str(path))
    version = kubernetes_version(spec, catalog()) + ".0"
    proc = subprocess.run(
        [tool, "--strict", "-k", version, *paths], capture_output=True, text=True, check=False
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "ERROR" not in out and "FATAL" not in out, out
    warned = set(re.findall(r"kind (\w+)", " ".join(ln for ln in out.splitlines() if "WARN" in ln)))
    kinds = {doc["kind"] for rel in manifests for doc in yaml.safe_load_all(files[rel]) if doc}
    assert warned == kinds & CUSTOM_KINDS, out
    assert "passed" in out, "at least one built-in object was validated against a schema"
    # the NCCL namespace's policies, each checked against the NetworkPolicy schema
    for name in ("default-deny", "within-namespace", "dns", "train-packages"):
        assert f"passed for resource networkpolicy/{name} " in out, out


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_helm_values_files_are_yaml_with_their_pinned_chart(
    stack: str, overrides: list[str]
) -> None:
    spec, _ = load_stack_spec(stack, overrides)
    values = {k: v for k, v in render_k8s_bundle(spec, stack).items() if k.startswith("helm/")}
    assert values
    for rel, text in values.items():
        assert isinstance(yaml.safe_load(text), dict), rel
        assert re.search(r"--version v?\d+\.\d+\.\d+ ", text), rel


def test_kubernetes_validate_is_installed() -> None:
    assert (
        shutil.which("kubernetes-validate")
        or Path(sys.executable).with_name("kubernetes-validate").exists()
    )
