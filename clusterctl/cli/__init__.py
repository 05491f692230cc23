"""The `clusterctl` command line: each module registers one command group on the main typer app.

argv        global flags anywhere: moved where click reads them
common      the consoles, the stack option, one way to refuse input, the target resolver
paths       output paths (--out, --junit, init's folder) checked before any work
plan        `plan`, `catalog`, `schema`, `init`
stacks      `stacks`: the project's stack files
selection   `stack select|unselect|show`: the stack -s means when not given
images      `images`: what each VM role of a stack boots, its pin, how to move it
lifecycle   `up`, `status`, `down`
validate    `validate --nccl`, and the dispatch of `validate --train`
validate_train  `validate --train`: refusals, the throughput floor, the run, its table and history
report      how a validation outcome is shown: rich tables, JSON, JUnit
acceptance  `validate --report`, the validation history, `validate history`
nodes       `node replace`
users       `users add|remove|sync|list`: the team of a Slurm stack
notebook    `notebook`: JupyterLab as a job on a GPU node, through a local tunnel
sandbox     `sandbox ...`, and the old `sandbox vm ...` spelling
sandbox_vm  the sandbox's commands: up, status, exec, reboot, fault, down
doctor      `doctor`: what this machine lacks
completion  `completion SHELL`
"""

from __future__ import annotations

import gc
import os
import sys

from clusterctl import interrupt

if os.path.basename(sys.argv[0]) == "clusterctl":  # the console script: before the imports below
    interrupt.install()
from typing import Annotated, NoReturn

import typer

from clusterctl import __version__
from clusterctl.cli.common import VERBOSE_ENV, out
from clusterctl.errors import UserError

# The cyclic collector at Python's default threshold (700 new objects) runs hundreds of times
# while the plan's mock engine builds its Outputs (tens of thousands of futures and callbacks):
# a quarter of `plan`'s time (benchmarks/plan_time.py). The same collections, less often.
gc.set_threshold(50_000, 20, 100)

app = typer.Typer(
    name="clusterctl",
    help="Provision cloud GPU clusters with Pulumi, prove their NCCL bandwidth, tear them down.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion [bash|zsh|fish|powershell]
    pretty_exceptions_enable=False,
    # Plain click help: no `<bool>` after flags, `[user@]host` shown as written (not rich markup).
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},  # sub-commands inherit it
    epilog="Exit codes: 0 success (a validation passed, warnings included), 1 a validation "
    "failed, 2 usage error (a flag, value, file or stack given wrong), 3 inconclusive (it ran "
    "but proved nothing: unreachable, did not start, an incomplete log), 130 interrupted.",
)


def _version(value: bool) -> None:
    if value:
        out.print(f"clusterctl {__version__}")
        raise typer.Exit()


@app.command("version")
def _version_command() -> None:
    """Print the version (as --version does)."""
    out.print(f"clusterctl {__version__}", highlight=False)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    project_dir: Annotated[
        str | None,
        typer.Option(
            "--project-dir",
            help="The project folder (Pulumi.yaml + stacks/); default: the current folder or the "
            "nearest one above it with a Pulumi.yaml.",
            envvar="GPU_CLUSTERS_PROJECT_DIR",
            show_envvar=True,
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="Say more: `doctor` shows every check with its path and version.",
            envvar=VERBOSE_ENV,
        ),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="An internal error shows its traceback.", envvar="CLUSTERCTL_DEBUG"
        ),
    ] = False,
) -> None:
    """Provision cloud GPU clusters with Pulumi, prove their NCCL bandwidth, tear them down.

    Global options (--project-dir, --verbose, --debug) go anywhere on the line, and -s/--stack
    and --json before the command too, as kubectl's do.
    """
    from clusterctl.project import PROJECT_DIR_ENV

    if project_dir:
        os.environ[PROJECT_DIR_ENV] = project_dir
    if verbose:
        os.environ[VERBOSE_ENV] = "1"
    if debug:
        os.environ["CLUSTERCTL_DEBUG"] = "1"


def _example_names(incomplete: str) -> list[str]:
    from clusterctl.cli.completion import example_names

    return example_names(incomplete)


def init(
    example: Annotated[
        str,
        typer.Option(
            "--example",
            help="The example stack to start from (see `clusterctl init --example list`).",
            autocompletion=_example_names,
        ),
    ],
    dest: Annotated[
        str,
        typer.Argument(
            help="The project folder: a new one, or a project of yours to add the example's "
            "stack file to. Default: the current folder (as `pulumi new`)."
        ),
    ] = ".",
    force: Annotated[
        bool, typer.Option("--force", help="Replace files of the project that exist already.")
    ] = False,
) -> None:
    """Start a project of your own: Pulumi.yaml, the program and one example stack file; in an
    existing project, add the example's stack file."""
    import shlex
    import sys
    from pathlib import Path

    from clusterctl.project import example_stacks, init_project

    if example == "list":
        out.print("\n".join(example_stacks()))
        return
    from clusterctl.cli.paths import writable_dir

    writable_dir(Path(dest), "init folder")
    written = init_project(example, Path(dest), force=force)
    files = "file" if len(written) == 1 else "files"
    out.print(f"wrote {len(written)} {files} to {dest}:", highlight=False)
    for path in written:
        out.print(f"  {path}", highlight=False)
    here = Path(dest).resolve() == Path.cwd().resolve()
    step = f"clusterctl plan -s {shlex.quote(example)}"
    out.print(f"next: {step if here else f'cd {shlex.quote(dest)} && {step}'}", highlight=False)
    if sys.prefix == sys.base_prefix:  # no virtualenv to point Pulumi.yaml at
        out.print(
            "for `clusterctl up`: Pulumi runs the program in the project's .venv; make it "
            "with the packages clusterctl has: python3 -m venv .venv && .venv/bin/pip install "
            "gpu-clusters (or this checkout: -e PATH)",
            highlight=False,
            soft_wrap=True,
        )


def _register_subcommands() -> None:
    from clusterctl.cli import (
        completion,
        doctor,
        images,
        lifecycle,
        nodes,
        notebook,
        plan,
        sandbox,
        selection,
        stacks,
        users,
        validate,
    )

    plan.register(app)
    images.register(app)
    doctor.register(app)
    completion.register(app)
    stacks.register(app)
    selection.register(app)
    app.command()(init)
    sandbox.register(app)
    validate.register(app)
    lifecycle.register(app)
    nodes.register(app)
    users.register(app)
    notebook.register(app)


_register_subcommands()


def main() -> None:
    """Entry point: user errors print one line per problem and exit 2, never a traceback.

    Under --json every error is `{"error": ...}` on stdout instead, with the same exit code.
    Click's own usage errors (a missing option, say) exit 2 too. Ctrl-C exits 130, quietly: also
    once the command is done, as the process ends without the interpreter's teardown (which
    restores Python's default SIGINT action and wakes the mock engine's leftover asyncio tasks).
    """
    interrupt.install()
    try:
        code = _run()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    interrupt.end(code)


def _run() -> int:
    from typer._click.exceptions import ClickException  # typer carries its own click

    from clusterctl.errors import path_problem

    try:
        from clusterctl.cli.argv import normalise

        code = app(args=normalise(sys.argv[1:]), standalone_mode=False)
    except UserError as exc:
        fail(exc.problems, 2)
    except (KeyboardInterrupt, typer.Abort):
        interrupt.exit_now()
    except ClickException as exc:
        if wants_json():
            fail([exc.format_message()], exc.exit_code)
        exc.show()
        return exc.exit_code
    except OSError as exc:
        if exc.filename is None or os.environ.get("CLUSTERCTL_DEBUG"):
            _internal(exc)
        fail([path_problem(exc)], 2)
    except Exception as exc:  # a bug: still no traceback unless asked for
        _internal(exc)
    return code if isinstance(code, int) else 0


def fail(lines: list[str], code: int, *, label: str = "error") -> NoReturn:
    """common.fail outside the command's run: its typer.Exit ends the process."""
    from clusterctl.cli import common

    try:
        common.fail(lines, code, label=label)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)


def wants_json() -> bool:
    """--json among the arguments (not after `--`, where they belong to another program)."""
    args = sys.argv[1:]
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def _internal(exc: Exception) -> NoReturn:
    if os.environ.get("CLUSTERCTL_DEBUG"):
        raise exc
    problem = f"{exc.__class__.__name__}: {exc} (set CLUSTERCTL_DEBUG=1 for the traceback)"
    fail([problem], 1, label="internal error")
