"""What every command group shares: the consoles, the stack option (its default: the selected
stack, which `stack select` in selection.py records), one way to refuse input."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape

from clusterctl.errors import UserError

if TYPE_CHECKING:
    from clusterctl.project import Project

VERBOSE_ENV = "CLUSTERCTL_VERBOSE"
"""Set by `--verbose` (or by the user): commands say more."""


def verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


PIPED_WIDTH = 10_000
"""Lines are not wrapped when the output goes to a file or a pipe (as pulumi and kubectl do):
a wrapped line splits the commands and numbers a script or grep looks for."""


class _Console(Console):
    """Rich's console, but piped output (no COLUMNS set) is one line per line, not 80 columns
    or the width of a terminal that another stream is attached to."""

    @property  # type: ignore[override, misc]
    def size(self) -> ConsoleDimensions:
        size = super().size
        if not self.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
            return ConsoleDimensions(PIPED_WIDTH, size.height)
        return size


out = _Console()
err = _Console(stderr=True)


STACK_ENV = "CLUSTERCTL_STACK"
SELECTED = Path(".clusterctl") / "stack"
"""Under the project folder: the selected stack's name, one line."""


def selected_file(project: Project) -> Path:
    return project.dir / SELECTED


def selected_stack() -> str | None:
    """The stack `clusterctl stack select` recorded for the current project (None: none, or no
    project here)."""
    from clusterctl.project import find_project

    try:
        path = selected_file(find_project())
        name = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    except (UserError, OSError, UnicodeDecodeError):
        return None
    return name or None


def default_stack() -> str | None:
    """-s's default: the selected stack, or one line saying the three ways to name one."""
    from typer._click.globals import get_current_context  # typer carries its own click

    ctx = get_current_context(silent=True)
    if ctx is not None and ctx.resilient_parsing:  # shell completion: never refuse
        return None
    name = selected_stack()
    if name is None:  # bail, not UserError: this runs inside click's parsing
        bail(
            f"-s/--stack: no stack given; pass -s STACK, set {STACK_ENV}=STACK, or select one "
            "for this project with `clusterctl stack select STACK` (`clusterctl stacks` lists them)"
        )
    return name


def stack_names_for_completion(incomplete: str) -> list[str]:
    from clusterctl.cli.completion import stack_names

    return stack_names(incomplete)


StackOpt = Annotated[
    str,
    typer.Option(
        "--stack",
        "-s",
        help="Stack name: reads stacks/Pulumi.<stack>.yaml of the project; default: "
        "$CLUSTERCTL_STACK, else the stack `clusterctl stack select` chose.",
        envvar="CLUSTERCTL_STACK",
        default_factory=default_stack,
        show_default=False,
        autocompletion=stack_names_for_completion,
    ),
]
OptionalStackOpt = Annotated[
    str | None,
    typer.Option(
        "--stack",
        "-s",
        help="A deployed stack: use its outputs.",
        autocompletion=stack_names_for_completion,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


def bail(*lines: str) -> NoReturn:
    """One `error:` line per problem on stderr (under --json: JSON on stdout), exit 2."""
    fail(list(lines), 2)


def fail(lines: list[str], code: int, *, label: str = "error") -> NoReturn:
    """Say what went wrong and exit `code`: one `error:` line per problem on stderr, or under
    --json `{"error": ..., "problems": [...]}` on stdout (as `pulumi --json` and `sky` do)."""
    if json_mode():
        text = "\n".join(lines) if label == "error" else f"{label}: " + "\n".join(lines)
        sys.stdout.write(json.dumps({"error": text, "problems": lines}, indent=2) + "\n")
    else:
        for line in lines:
            err.print(f"[red]{label}:[/] {escape(line)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def inconclusive(*lines: str) -> NoReturn:
    """The command ran but proved nothing (unreachable, did not start, an incomplete log): one
    `error:` line per problem, exit 3 (constants.EXIT_INCONCLUSIVE), which CI tells from a
    usage error's 2."""
    from clusterctl.constants import EXIT_INCONCLUSIVE

    fail(list(lines), EXIT_INCONCLUSIVE)


def json_mode() -> bool:
    """The running command was given --json (from its parameters, else the command line)."""
    from typer._click.globals import get_current_context  # typer carries its own click

    ctx = get_current_context(silent=True)
    if ctx is not None:
        return bool(ctx.params.get("as_json"))
    from clusterctl.cli import wants_json

    return wants_json()


SandboxOpt = Annotated[
    bool, typer.Option("--sandbox", help="The running local sandbox (clusterctl sandbox).")
]
SandboxDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--sandbox-dir",
        help="The sandbox's workdir, if not /var/tmp/clusterctl-vm-sandbox (implies --sandbox).",
    ),
]


def sandbox_workdir(sandbox: bool, sandbox_dir: Path | None) -> str | None:
    if not (sandbox or sandbox_dir):
        return None
    from clusterctl.project import VM_WORKDIR

    return str(sandbox_dir or VM_WORKDIR)


SANDBOX_ABSENT = (
    "the sandbox ships with the source checkout, not the installed package: in a clone of "
    'gpu-clusters run python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" (its README\'s '
    "first command) and use .venv/bin/clusterctl"
)


def need_sandbox(what: str) -> None:
    """Refuse `what` in one line when clusterctl.sandbox is not installed: the wheel leaves it
    out (pyproject.toml), an editable install of the checkout has it."""
    import importlib.util

    if importlib.util.find_spec("clusterctl.sandbox") is None:
        raise UserError(f"{what}: {SANDBOX_ABSENT}")


def resolve_target(*, sandbox: str | None = None, **given: Any):
    """validate.targets.resolve, or for `--sandbox` the sandbox's own target (the one place that
    joins them: validation imports nothing of the sandbox)."""
    from clusterctl.validate.targets import resolve, which_target

    keys = ("stack", "host", "kubeconfig", "from_log")
    which_target(sandbox=sandbox, **{k: given.get(k) for k in keys})
    if sandbox is None:
        return resolve(**given)
    need_sandbox("--sandbox")
    from clusterctl.sandbox.vm.target import sandbox_target

    return sandbox_target(Path(sandbox), given.get("nodes"))
