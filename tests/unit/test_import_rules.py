"""The import rules import-linter cannot say alone (the contracts are in pyproject.toml and run
by `lint-imports` in .ci/run): nccl/ and probe/ import nothing outside the standard library, and
the CLI starts without Pulumi or pydantic."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STDLIB_ONLY = ("clusterctl.nccl", "clusterctl.probe")


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, in functions too; relative ones resolved."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            name = ".".join(p for p in (base, node.module or "") if p)
            found.append((node.lineno, name))
    return found


@pytest.mark.parametrize("package", STDLIB_ONLY)
def test_standard_library_only(package: str) -> None:
    folder = ROOT.joinpath(*package.split("."))
    files = sorted(folder.rglob("*.py"))
    assert files
    outside = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in files
        for line, name in imported_modules(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not any(name == p or name.startswith(p + ".") for p in STDLIB_ONLY)
    ]
    assert outside == []


def test_the_check_sees_imports_inside_functions() -> None:
    probe = ROOT / "clusterctl" / "probe" / "__main__.py"
    names = [name for _, name in imported_modules(probe)]
    assert "clusterctl.nccl.emit" in names  # imported inside a function there


# yaml is left out on purpose: clusterctl.project (imported for its defaults) may read YAML.
HEAVY = {"pulumi", "pydantic", "jinja2", "components"}


def loaded_after(code: str) -> set[str]:
    """Top-level packages in sys.modules after `code` runs in a fresh interpreter."""
    probe = (
        f"import json, sys\n{code}\n"
        "sys.__stdout__.write('\\n' + json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return set(json.loads(run.stdout.splitlines()[-1]))


def test_import_cli_leaves_pulumi_and_pydantic_out() -> None:
    loaded = loaded_after("import clusterctl.cli")
    assert "clusterctl" in loaded and "typer" in loaded  # it did import the CLI
    assert loaded.isdisjoint(HEAVY), sorted(loaded & HEAVY)


def test_help_leaves_pulumi_and_pydantic_out() -> None:
    code = (
        "sys.argv = ['clusterctl', '--help']\n"
        "import clusterctl.interrupt\n"
        "clusterctl.interrupt.end = sys.exit  # main() leaves with os._exit; here: come back\n"
        "from clusterctl.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    loaded = loaded_after(code)
    assert loaded.isdisjoint(HEAVY), sorted(loaded & HEAVY)


def _absolute_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file that is not relative: a relative import stays
    inside the package wherever it is copied."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.append((node.lineno, node.module or ""))
    return found


def _outside_stdlib(files: list[Path], allowed=lambda path, top: False) -> list[str]:
    return [
        f"{path.name}:{line}: {name}"
        for path in files
        for line, name in _absolute_imports(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not allowed(path, name.split(".")[0])
    ]


def test_power_program_imports_only_itself_the_standard_library_and_azure() -> None:
    """clusterctl/power is copied to the scheduler and the nodes as a package of its own
    (gpucl_power): every import of the project's is relative, and only azure_backend needs more
    than the standard library (the pinned venv's azure-identity and azure-mgmt-compute)."""
    files = sorted((ROOT / "clusterctl" / "power").glob("*.py"))
    assert len(files) >= 6
    azure_backend = lambda path, top: top == "azure" and path.name == "azure_backend.py"  # noqa: E731
    assert _outside_stdlib(files, azure_backend) == []


def test_slurm_exporter_imports_only_itself_and_the_standard_library() -> None:
    """clusterctl/monitor runs on the scheduler as gpucl_monitor with the system python3, no
    venv: only relative imports and the standard library."""
    files = sorted((ROOT / "clusterctl" / "monitor").glob("*.py"))
    assert len(files) == 3
    assert _outside_stdlib(files) == []


PROGRAM_MODULES = """
import sys
from clusterctl.plan.invokes import MOCK_INVOKES
from clusterctl.plan.mockengine import run_program
from clusterctl.spec.load import load_stack_spec
from components.program import run

spec, _ = load_stack_spec(sys.argv[1], sys.argv[2:])
run_program(lambda: run(spec, sys.argv[1]), project="gpu-clusters", stack=sys.argv[1],
            invokes=MOCK_INVOKES)
print(" ".join(sorted(m for m in sys.modules if m.startswith("clusterctl."))))
"""


@pytest.mark.parametrize("stack", ["azure-h100", "aws-p5", "aks-h100"])
def test_the_pulumi_program_imports_no_validate_or_lifecycle_code(stack: str) -> None:
    """`pulumi up` loads what builds resources: the program never loads the NCCL hook's code
    (clusterctl.validate), not even when the stack asks for the hook (validation.nccl.onDeploy;
    the entry point binds it), nor lifecycle's."""

    def loaded(*overrides: str) -> set[str]:
        proc = subprocess.run(
            [sys.executable, "-c", PROGRAM_MODULES, stack, *overrides],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        return set(proc.stdout.split())

    for overrides in ([], ["validation.nccl.onDeploy=true"]):
        modules = loaded(*overrides)
        assert "clusterctl.spec.model" in modules  # the check saw the program's imports
        assert {
            m for m in modules if m.startswith(("clusterctl.validate", "clusterctl.lifecycle"))
        } == set()


ENTRY_POINT = """
import json, os, runpy, sys
import yaml
from clusterctl.plan.invokes import MOCK_INVOKES
from clusterctl.plan.mockengine import run_program

stack = sys.argv[1]
cluster = yaml.safe_load(open(f"stacks/Pulumi.{stack}.yaml"))["config"]["gpu-clusters:cluster"]
cluster.setdefault("validation", {}).setdefault("nccl", {})["onDeploy"] = True
os.environ["PULUMI_CONFIG"] = json.dumps({"gpu-clusters:cluster": json.dumps(cluster)})
os.environ["GPUCL_SKIP_PREFLIGHT"] = "a test of the program's imports"
run = run_program(lambda: runpy.run_path("__main__.py") and {}, project="gpu-clusters",
                  stack=stack, invokes=MOCK_INVOKES)
print(json.dumps({
    "hooks": sorted(h for r in run.resources for h in r.after_create_hooks),
    "validate": sorted(m for m in sys.modules if m.startswith("clusterctl.validate")),
}))
"""


def test_the_program_entry_point_binds_the_nccl_hook_without_loading_validate() -> None:
    """`pulumi up` runs __main__.py: with validation.nccl.onDeploy the hook is bound to the last
    scale set, and the validation's code (clusterctl.validate) loads only when the hook fires."""
    proc = subprocess.run(
        [sys.executable, "-c", ENTRY_POINT, "azure-h100"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.splitlines()[-1])
    assert seen["hooks"] == ["h100-nccl-validation"]
    assert seen["validate"] == []


def test_no_cycle_is_excused() -> None:
    """The acyclic contracts hold with no import left out of them: two modules that need one
    thing share a module below both (the --stack option's default lives with the option)."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    acyclic = [c for c in contracts["contracts"] if c["type"] == "acyclic_siblings"]
    assert acyclic
    for contract in acyclic:
        assert not contract.get("ignore_imports"), contract["id"]
