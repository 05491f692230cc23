"""Every benchmark the README or the docs site shows (docs/benchmarks.md holds them) is run by a
test, with the documented arguments except `--runs` (one run: the test proves the command works,
the benchmark's numbers come from running it as written). The ones that boot the VM sandbox (root)
name the e2e test that runs them."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests import docs_pages

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = {
    "health_fast_tier": "tests/e2e/vm/test_vm_validate.py::"
    "test_the_fast_tier_benchmark_runs_on_a_booted_node",
    "sandbox_vm_boot": "tests/e2e/vm/test_vm_benchmarks.py::test_the_boot_benchmark_runs",
    "soak": "tests/e2e/vm/test_vm_soak.py::"
    "test_the_soak_runs_every_step_with_no_violation_and_no_lost_job",
}
# What each run prints, so a benchmark that runs and says nothing fails.
PRINTS = {
    "plan_time": "azure-h100",
    "cli_start": "--help",
    "power_save": "idleMinutes",
    "localize_rounds": "rounds",
    "power_scale": "billing DOWN",
    "test_time": "fast suite",
}
# The docs run test_time.py on the whole fast suite (this test is in it) and on an e2e run's
# report: here, on one small test file, and on the report of that file's own run.
NARROW = {"test_time": ["--", "tests/unit/test_constants.py"]}


def readme_benchmarks() -> dict[str, list[str]]:
    """{script name: its arguments} for every `benchmarks/NAME.py` the README or docs name."""
    found: dict[str, list[str]] = {}
    for m in re.finditer(r"benchmarks/(\w+)\.py([^`\n]*)", docs_pages.text()):
        args = shlex.split(m.group(2))
        if found.get(m.group(1)) is None or args:
            found[m.group(1)] = args
    return found


def test_the_readme_shows_every_benchmark() -> None:
    scripts = {p.stem for p in (ROOT / "benchmarks").glob("*.py")}
    assert set(readme_benchmarks()) == scripts


@pytest.mark.parametrize("name", sorted(SANDBOX))
def test_sandbox_benchmarks_name_a_test_that_exists(name: str) -> None:
    path, func = SANDBOX[name].split("::")
    assert f"def {func}(" in (ROOT / path).read_text()
    assert name in readme_benchmarks()


def test_every_readme_benchmark_is_run_by_a_test() -> None:
    assert set(readme_benchmarks()) == set(PRINTS) | set(SANDBOX)


@pytest.mark.parametrize("name", sorted(set(PRINTS)))
def test_readme_benchmark_runs(name: str, tmp_path: Path) -> None:
    args = readme_benchmarks()[name]
    if "--runs" in args:
        args[args.index("--runs") + 1] = "1"
    else:
        args += ["--runs", "1"]
    if "--e2e" in args:  # the JUnit XML of a real pytest run
        junit = tmp_path / "e2e.xml"
        run = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider"]
        run.append(f"--junitxml={junit}")
        subprocess.run([*run, *NARROW[name][1:]], cwd=ROOT, check=True, capture_output=True)
        args[args.index("--e2e") + 1] = str(junit)
    proc = subprocess.run(
        [sys.executable, f"benchmarks/{name}.py", *args, *NARROW.get(name, [])],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    # A benchmark over its own target exits 1 saying so ("above ..."): it ran, and its numbers are
    # the benchmark's to judge, not this test's (one run on a busy CI host says nothing of speed).
    over_target = proc.returncode == 1 and proc.stderr.strip().startswith("above ")
    assert proc.returncode == 0 or over_target, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert PRINTS[name] in proc.stdout, proc.stdout[-2000:]
    if "--e2e" in args:  # each module's share of the run, one module here: all of it
        assert re.search(r"^tests\.unit\.test_constants +\d+ +\d+ +\d+\.\d%$", proc.stdout, re.M)
