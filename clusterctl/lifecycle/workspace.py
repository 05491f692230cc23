"""The Pulumi project, its stack files and the `pulumi` CLI, as the Automation API needs them.

LocalWorkspace's stack-settings helpers look for Pulumi.<stack>.yaml in the work dir and ignore
`stackConfigDir` (https://github.com/pulumi/pulumi/issues/10305). So this module never calls them:
it reads Pulumi.yaml itself to find the stack file, and leaves all config handling to CLI
commands, which do honour stackConfigDir.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from clusterctl.errors import UserError
from clusterctl.lifecycle.gate import PREFLIGHT_ENV
from clusterctl.project import Project
from clusterctl.project import find_project as find_project
from clusterctl.spec.load import load_spec
from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.stackfile import read_stack_config

if TYPE_CHECKING:
    from pulumi.automation import PulumiCommand, Stack

INSTALL_HINT = (
    "install it with `curl -fsSL https://get.pulumi.com | sh` (Linux, macOS), "
    "`brew install pulumi/tap/pulumi` or `winget install pulumi`; "
    "see https://www.pulumi.com/docs/iac/download-install/"
)
CLI_MISSING = (
    "the Pulumi CLI (`pulumi`) is not on PATH nor in ~/.pulumi/bin; clusterctl up/status/down "
    f"drive it through Pulumi's Automation API: {INSTALL_HINT} "
    "(`clusterctl plan` works without it)"
)


def load_spec_for(project: Project, stack: str) -> ClusterSpec:
    """The stack's validated spec, read from the project's own stack folder."""
    config = read_stack_config(stack, project.stack_config_dir)
    spec, _warnings = load_spec(config["gpu-clusters:cluster"])
    return spec


def stack_secrets_provider(project: Project, stack: str) -> str | None:
    try:
        doc = yaml.safe_load(project.stack_file(stack).read_text()) or {}
    except (OSError, ValueError, yaml.YAMLError):  # ValueError: not UTF-8
        return None
    return doc.get("secretsprovider") if isinstance(doc, dict) else None


def preflight(project: Project, stack: str) -> None:
    """Problems the CLI would only report half-way, said up front with the fix."""
    url = project.backend_url or ""
    folder = project.local_state_dir()
    if folder is not None:
        # The CLI does not create a missing local state folder; it fails to open the bucket.
        folder.mkdir(parents=True, exist_ok=True)
        provider = stack_secrets_provider(project, stack) or "passphrase"
        has_passphrase = {"PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE"} & set(
            os.environ
        )
        if provider.startswith("passphrase") and not has_passphrase:
            raise UserError(
                f"stack '{stack}' keeps its state in {url} with passphrase secrets: set "
                "PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE); an empty value "
                "is allowed"
            )


def find_cli() -> Path:
    found = shutil.which("pulumi")
    if found:
        return Path(found)
    default = Path.home() / ".pulumi" / "bin" / "pulumi"
    if default.is_file() and os.access(default, os.X_OK):
        return default
    raise UserError(CLI_MISSING)


def pulumi_command() -> PulumiCommand:
    """The user's CLI, with the SDK's own version check; every failure is one clear line."""
    from pulumi.automation import InvalidVersionError, PulumiCommand

    path = find_cli()
    # With a root the SDK runs `<root>/bin/pulumi` and puts that bin first on PATH, so the
    # language and provider plugins bundled next to the binary win.
    root = str(path.parent.parent) if path.parent.name == "bin" else None
    try:
        return PulumiCommand(root=root) if root else PulumiCommand()
    except InvalidVersionError as exc:
        raise UserError(f"the Pulumi CLI at {path}: {exc}") from None
    except (OSError, subprocess.CalledProcessError) as exc:
        raise UserError(
            f"could not run `{path} version` ({exc}); reinstall it: {INSTALL_HINT}"
        ) from None


def open_stack(project: Project, stack: str, *, create: bool) -> Stack:
    """Select the stack (or create it, for `up`); StackNotFoundError when it does not exist."""
    from pulumi import automation as auto

    command = pulumi_command()  # a missing CLI first: no use asking for a passphrase without it
    preflight(project, stack)
    env = {"PULUMI_SKIP_UPDATE_CHECK": "true"}
    if create:
        # Only `up` creates; it runs the program (preview, up) only after its capacity and
        # permission checks passed, so the program may trust this (lifecycle/gate.py).
        env[PREFLIGHT_ENV] = stack
    workspace = auto.LocalWorkspace(
        work_dir=str(project.dir),
        pulumi_command=command,
        env_vars=env,
    )
    init = auto.Stack.create_or_select if create else auto.Stack.select
    return init(stack, workspace)
