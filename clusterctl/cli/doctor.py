"""`clusterctl doctor`: what this machine lacks, per path a newcomer takes, as `sky check` does.

Paths: plan (nothing beyond clusterctl), the sandbox (HOST_TOOLS from
clusterctl/host_tools.py, the one list `sandbox up` also checks), Azure and AWS (`up`,
`status`, `down` drive the Pulumi CLI; the clouds' own CLIs give the credentials), and Kubernetes
(`validate` on EKS/AKS runs kubectl, and an AKS kubeconfig runs kubelogin). `--verbose` (a global
flag) shows every check, found ones with their path and version.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Annotated

import typer

from clusterctl.cli.common import SANDBOX_ABSENT, JsonOpt, out, verbose
from clusterctl.host_tools import HOST_TOOLS, found_at

PULUMI_INSTALL = "https://www.pulumi.com/docs/iac/download-install/"
AWS_INSTALL = "https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html"


@dataclass(frozen=True)
class CloudTool:
    name: str
    why: str
    fix: str


@dataclass(frozen=True)
class Check:
    path: str
    tool: str
    found: str | None
    """Where it is; None: absent."""
    version: str | None = None
    problem: str | None = None
    """Why this path cannot use it (absent, or the wrong version), with the fix; None: usable."""
    note: str | None = None
    """Usable, but worth a line (an old major version)."""


PULUMI = CloudTool("pulumi", "`clusterctl up`/`status`/`down` run it", f"see {PULUMI_INSTALL}")
CLOUD_PATHS: dict[str, tuple[CloudTool, ...]] = {
    "azure": (
        PULUMI,
        CloudTool(
            "az", "Azure credentials come from `az login`", "see https://aka.ms/installazurecli"
        ),
    ),
    "aws": (
        PULUMI,
        CloudTool(
            "aws",
            "EKS credentials: the kubeconfig runs `aws eks get-token`",
            f"install AWS CLI v2: {AWS_INSTALL}",
        ),
    ),
    "kubernetes": (
        CloudTool(
            "kubectl",
            "`clusterctl validate` on EKS/AKS stacks runs it",
            "see https://kubernetes.io/docs/tasks/tools/",
        ),
        CloudTool(
            "kubelogin",
            "an AKS stack's kubeconfig runs `kubelogin get-token`",
            "`az aks install-cli` installs it",
        ),
    ),
}
PATHS = ("plan", "sandbox", *CLOUD_PATHS)


def register(app: typer.Typer) -> None:
    app.command()(doctor)


VERSION_ARGS = {"pulumi": ["version"], "kubectl": ["version", "--client"]}
"""How a tool says its version where `--version` is not it."""


def _version(name: str, path: str) -> str | None:
    """The first line the tool's version command prints (AWS CLI v1: on stderr), or None."""
    try:
        proc = subprocess.run([path, *VERSION_ARGS.get(name, ["--version"])],
                              capture_output=True, text=True, timeout=10)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    text = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return text[0].strip() if text else None


def aws_cli_note(version: str | None) -> tuple[str | None, str | None]:
    """(problem, note) for the AWS CLI found. Before 1.24.0, v1's `eks get-token` answers with
    client.authentication.k8s.io/v1alpha1, which kubectl 1.24+ refuses, and the kubeconfig here
    asks for v1beta1 (aws/aws-cli#6940, aws/containers-roadmap#1736): unusable. A later v1 works,
    but AWS's install guide and this project's EKS path are v2: said, not refused."""
    found = re.match(r"aws-cli/(\d+)\.(\d+)\.(\d+)", version or "")
    if found is None or int(found.group(1)) >= 2:
        return None, None
    numbers = found.group(0).split("/")[1]
    if (int(found.group(2)), int(found.group(3))) < (24, 0):
        return (
            f"AWS CLI v1 {numbers}: its `eks get-token` answers v1alpha1, which kubectl 1.24+ "
            f"refuses; install AWS CLI v2: {AWS_INSTALL}"
        ), None
    return (
        None,
        f"AWS CLI v1 {numbers}: works for `eks get-token`; v2 is what AWS documents: {AWS_INSTALL}",
    )


def _checks(show_versions: bool) -> list[Check]:
    checks = []
    if importlib.util.find_spec("clusterctl.sandbox") is None:  # an installed wheel leaves it out
        checks.append(Check("sandbox", "clusterctl.sandbox", None, problem=SANDBOX_ABSENT))
    for t in HOST_TOOLS:
        at = found_at(t.name)
        problem = None if at else f"{t.why}; install it: sudo apt-get install {t.package}"
        checks.append(Check("sandbox", t.name, at, problem=problem))
    for path, tools in CLOUD_PATHS.items():
        for c in tools:
            at = found_at(c.name)
            if at is None:
                checks.append(Check(path, c.name, None, problem=f"{c.why}; {c.fix}"))
                continue
            version = _version(c.name, at) if show_versions or c.name == "aws" else None
            problem, note = aws_cli_note(version) if c.name == "aws" else (None, None)
            checks.append(Check(path, c.name, at, version, problem, note))
    return checks


def doctor(
    as_json: JsonOpt = False,
    only: Annotated[
        str | None,
        typer.Option(
            "--path", help=f"Check one path: {', '.join(PATHS)} (exit 1 if it lacks something)."
        ),
    ] = None,
) -> None:
    """What this machine lacks for each path: plan, sandbox, azure, aws, kubernetes.

    One line per path (ready, or what it lacks), then one line per missing program with its fix;
    `--verbose` shows every check with its path and version. Exit 1 when the sandbox lacks a
    program (or, with --path, when that path lacks one); the cloud paths are reported, not
    required: `plan` needs none of them.
    """
    from clusterctl.cli.common import bail

    if only is not None and only not in PATHS:
        bail(f"--path {only}: not a path; choose one of {', '.join(PATHS)}")
    checks = _checks(verbose())
    if only is not None:
        checks = [c for c in checks if c.path == only]
    lacking = {c.path for c in checks if c.problem}
    failed = (only in lacking) if only is not None else ("sandbox" in lacking)
    if as_json:
        paths = {p: {"ready": p not in lacking,
                     "missing": [c.tool for c in checks if c.path == p and c.problem]}
                 for p in PATHS if only in (None, p)}  # fmt: skip
        doc = {
            "paths": paths,
            "checks": [asdict(c) for c in checks],
            # as before: the sandbox's programs, and every cloud program once
            "host": [{**asdict(t), "found": found_at(t.name)} for t in HOST_TOOLS],
            "ok": not failed,
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        _print(checks, lacking, only)
    if failed:
        raise typer.Exit(1)


def _print(checks: list[Check], lacking: set[str], only: str | None) -> None:
    def say(text: str) -> None:
        out.print(text, highlight=False, soft_wrap=True, markup=False)

    for path in PATHS:
        if only not in (None, path):
            continue
        mine = [c for c in checks if c.path == path]
        if path == "plan":
            say("plan        ready (needs nothing beyond clusterctl)")
            continue
        bad = [c for c in mine if c.problem]
        state = "ready" if path not in lacking else "lacks " + ", ".join(c.tool for c in bad)
        say(f"{path:<11} {state}")
        for c in mine:
            if c.problem and c.found is None:
                say(f"missing  {c.tool}: {c.problem}")
            elif c.problem:
                say(f"unusable {c.tool} ({c.found}): {c.problem}")
            elif c.note:
                say(f"note     {c.tool} ({c.found}): {c.note}")
            elif verbose():
                say(f"ok       {c.tool} ({c.found}{', ' + c.version if c.version else ''})")
    missing = [t for t in HOST_TOOLS if found_at(t.name) is None]
    if missing and only in (None, "sandbox"):
        packages = " ".join(dict.fromkeys(t.package for t in missing))
        say(f"the sandbox needs: sudo apt-get install {packages}")
