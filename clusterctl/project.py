"""Where things are: the user's project (Pulumi.yaml, its stack files, its state backend), the
data shipped with clusterctl (templates, catalog, example stacks), and the sandbox's workdir.

Every command finds a stack the same way: the project in the current folder (or the nearest one
above it, as `pulumi` does), or the one named by `--project-dir` / $GPU_CLUSTERS_PROJECT_DIR. The
shipped example stacks are never used behind the user's back: `clusterctl init --example NAME DIR`
copies one out into a project of their own.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from clusterctl.errors import UserError

PROJECT_NAME = "gpu-clusters"
PROJECT_DIR_ENV = "GPU_CLUSTERS_PROJECT_DIR"
BACKEND_ENV = "PULUMI_BACKEND_URL"
VM_WORKDIR = Path("/var/tmp/clusterctl-vm-sandbox")
"""Where `clusterctl sandbox` keeps its state unless told otherwise."""

SCHEMA_FILE = "stack.schema.json"
"""The stack-file JSON Schema: in the checkout's config/, and beside an `init` project's stacks/."""
_PKG = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The folder holding templates/, config/ and the example stacks/.

    In a checkout (or an editable install) that is the repository root; a wheel carries copies
    under clusterctl/_data (see pyproject's force-include).
    """
    installed = _PKG / "_data"
    if (installed / "templates").is_dir():
        return installed
    return _PKG.parent


def templates_dir() -> Path:
    return data_root() / "templates"


def config_dir() -> Path:
    """The catalog folder; GPU_CLUSTERS_CONFIG_DIR points at a catalog of your own."""
    override = os.environ.get("GPU_CLUSTERS_CONFIG_DIR")
    return Path(override) if override else data_root() / "config"


def examples_dir() -> Path:
    """The ready-made example stacks shipped with clusterctl."""
    return data_root() / "stacks"


def example_stacks() -> list[str]:
    return stack_names(examples_dir())


def stack_names(folder: Path) -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in folder.glob("Pulumi.*.yaml"))


@dataclass(frozen=True)
class Project:
    dir: Path
    stack_config_dir: Path
    backend_url: str | None
    """$PULUMI_BACKEND_URL if set, else Pulumi.yaml's backend.url (None: Pulumi Cloud)."""

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        return stack_names(self.stack_config_dir)

    def checkpoint_files(self, stack: str) -> list[Path]:
        """Where a file:// backend keeps the stack's state: project-scoped, then the layout
        before Pulumi 3.61 (pulumi `pkg/backend/diy`); none for any other backend."""
        state = self.local_state_dir()
        if state is None:
            return []
        stacks = state / ".pulumi" / "stacks"
        return [stacks / PROJECT_NAME / f"{stack}.json", stacks / f"{stack}.json"]

    def local_state_dir(self) -> Path | None:
        """The folder of a file:// backend (relative URLs are relative to the project)."""
        url = self.backend_url or ""
        if not url.startswith("file://"):
            return None
        folder = Path(url[len("file://") :]).expanduser()
        return folder if folder.is_absolute() else self.dir / folder


def find_project(start: Path | None = None) -> Project:
    """$GPU_CLUSTERS_PROJECT_DIR, else the nearest Pulumi.yaml of this project at or above the
    current folder."""
    override = os.environ.get(PROJECT_DIR_ENV)
    if override:
        doc = _project_doc(Path(override))
        if doc is None:
            other = _other_project(Path(override))
            raise UserError(
                other
                or f"--project-dir {override}: no Pulumi.yaml of project '{PROJECT_NAME}' "
                f"there; create one with `clusterctl init --example azure-h100 {override}`"
            )
        return _project(Path(override), doc)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        doc = _project_doc(folder)
        if doc is not None:
            return _project(folder, doc)
    other = next((o for f in (here, *here.parents) if (o := _other_project(f))), None)
    if other:
        raise UserError(other)
    raise UserError(
        f"no Pulumi.yaml of project '{PROJECT_NAME}' in {here} or above: start one with "
        f"`clusterctl init --example azure-h100 DIR` (examples: {', '.join(example_stacks())}), "
        "or pass --project-dir DIR"
    )


def _other_project(folder: Path) -> str | None:
    """Why a Pulumi.yaml in `folder` is not this project's (it names another project), or None."""
    path = folder / "Pulumi.yaml"
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(doc, dict) or doc.get("name") in (None, PROJECT_NAME):
        return None
    return (
        f"{path} names project '{doc.get('name')}', not '{PROJECT_NAME}': the stack files' "
        f"config keys ({PROJECT_NAME}:cluster) and the program are this project's; set "
        f"`name: {PROJECT_NAME}` there"
    )


def _project_doc(folder: Path) -> dict[str, Any] | None:
    path = folder / "Pulumi.yaml"
    if not path.is_file():
        return None
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {exc}") from None
    return doc if isinstance(doc, dict) and doc.get("name") == PROJECT_NAME else None


def _project(folder: Path, doc: dict[str, Any]) -> Project:
    found = doc.get("backend")
    backend: dict[str, Any] = found if isinstance(found, dict) else {}
    return Project(
        dir=folder.resolve(),
        stack_config_dir=(folder / str(doc.get("stackConfigDir") or ".")).resolve(),
        backend_url=os.environ.get(BACKEND_ENV) or backend.get("url"),
    )


def _use_this_virtualenv(pulumi_yaml: Path) -> None:
    """Point the project's `runtime.options.virtualenv` at the virtualenv clusterctl runs in:
    it holds the program's packages (clusterctl, components, the Pulumi providers), so `pulumi up`
    runs the program with them and no second install is needed. Outside a virtualenv the
    shipped `.venv` stays, and `init` says how to make it."""
    import sys

    if sys.prefix == sys.base_prefix:
        return
    text = pulumi_yaml.read_text(encoding="utf-8")
    pulumi_yaml.write_text(
        text.replace(
            "    virtualenv: .venv\n", f"    virtualenv: {sys.prefix}  # clusterctl's own\n"
        )
    )


def init_project(example: str, dest: Path, *, force: bool = False) -> list[Path]:
    """Copy the project files and one example stack into `dest`; return what was written. Into
    a project of ours (a second example), only the stack file.

    A file already there is never replaced without `force`: the refusal names each one.
    """
    if example not in example_stacks():
        raise UserError(
            f"--example {example}: no such example; choose one of {', '.join(example_stacks())}"
        )
    root = data_root()
    doc = _project_doc(dest) if dest.is_dir() else None
    stack_dir = _project(dest, doc).stack_config_dir if doc is not None else dest / "stacks"
    stack_file = stack_dir / f"Pulumi.{example}.yaml"
    copies = {examples_dir() / f"Pulumi.{example}.yaml": stack_file}
    if doc is None:  # a new project; in one of ours, only the example's stack file is added
        copies = {
            root / "Pulumi.yaml": dest / "Pulumi.yaml",
            root / "__main__.py": dest / "__main__.py",
            **copies,
            config_dir() / SCHEMA_FILE: dest / SCHEMA_FILE,
        }
    there = [dst for dst in copies.values() if dst.exists() or dst.is_symlink()]
    if there and not force:
        raise UserError(
            [
                f"{dst}: exists already; choose an empty or new folder, or pass --force to "
                "replace it"
                for dst in there
            ]
        )
    for src, dst in copies.items():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    if doc is None:
        _use_this_virtualenv(dest / "Pulumi.yaml")
    # The example's modeline names the checkout's config/; the project has the schema beside it.
    text = stack_file.read_text()
    stack_file.write_text(
        text.replace(f"$schema=../config/{SCHEMA_FILE}", f"$schema=../{SCHEMA_FILE}")
    )
    ignore = dest / ".gitignore"
    if not ignore.exists():
        ignore.write_text(".pulumi-state/\n.venv/\n")
        copies[ignore] = ignore
    return list(copies.values())
