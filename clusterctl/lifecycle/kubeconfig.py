"""A Kubernetes stack's kubeconfig on disk, so kubectl is always told which cluster to reach.

The EKS and AKS stacks export `kubeconfig` as a secret output (clusterctl/outputs.py). `clusterctl
up` writes it after a successful update, and `clusterctl validate -s` writes it again from
`pulumi stack output --show-secrets`, to `<project>/.clusterctl/<stack>.kubeconfig`, readable by
the user only (0600, in a 0700 folder). `validate -s` passes that file to kubectl and never falls
back to the ambient kubectl context.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clusterctl.errors import UserError
from clusterctl.outputs import KUBECONFIG, SECRET_MASK

STATE_DIR = ".clusterctl"
"""clusterctl's own state inside the project folder (ignored by git)."""

Fetch = Callable[[Path, str], "str | None"]


def kubeconfig_path(project_dir: Path, stack: str) -> Path:
    return project_dir / STATE_DIR / f"{stack}.kubeconfig"


def write_kubeconfig(project_dir: Path, stack: str, text: str) -> Path:
    """Write the kubeconfig with mode 0600 (never readable by others, not even for a moment)."""
    path = kubeconfig_path(project_dir, stack)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    os.replace(tmp, path)
    return path


def fetch_kubeconfig(project_dir: Path, stack: str) -> str | None:
    """The stack's secret kubeconfig output through the Pulumi CLI; None when it cannot say."""
    pulumi = shutil.which("pulumi") or str(Path.home() / ".pulumi" / "bin" / "pulumi")
    if not Path(pulumi).exists():
        return None
    argv = [pulumi, "stack", "output", KUBECONFIG, "--show-secrets", "-s", stack]
    try:
        proc = subprocess.run(
            [*argv, "--cwd", str(project_dir)], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = proc.stdout.strip()
    return text if proc.returncode == 0 and text else None


def _plain(value: Any) -> str | None:
    """The kubeconfig when the outputs carry it in the clear (not masked, not left out)."""
    if isinstance(value, str) and value.strip() and value != SECRET_MASK:
        return value
    return None


def stack_kubeconfig(project_dir: Path, stack: str, value: Any, fetch: Fetch | None = None) -> Path:
    """The file holding the stack's kubeconfig: written fresh from its output when it can be
    read, else the one the last `clusterctl up` wrote; never the ambient kubectl context."""
    text = _plain(value) or (fetch or fetch_kubeconfig)(project_dir, stack)
    if text:
        return write_kubeconfig(project_dir, stack, text)
    path = kubeconfig_path(project_dir, stack)
    if path.is_file():
        return path
    raise UserError(
        f"stack {stack}: cannot read its secret `{KUBECONFIG}` output (`pulumi stack output "
        f"{KUBECONFIG} --show-secrets -s {stack}` failed: is PULUMI_CONFIG_PASSPHRASE set?) and "
        f"no {path} from `clusterctl up`; or pass --kubeconfig FILE --sku SKU --nodes N"
    )
