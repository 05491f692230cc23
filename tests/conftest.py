"""Shared fixtures. Plans run the real Pulumi program under mocks and return recorded resources,
so component tests assert on plain data after everything resolved: nothing is left un-awaited.

Two suites (docs/tests.md): the fast one, `python -m pytest -q`, is everything outside tests/e2e/,
run by any user, in parallel (pytest-xdist, `-n auto` in pyproject's addopts); the end-to-end one,
`pytest -m e2e` as root, is tests/e2e/, on three workers taking whole modules (E2E_ORDER), the
soak at full CPU priority and the others niced (E2E_FIRST)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLURM_STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")]
    for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
    if "scheduler: slurm" in p.read_text()
)
"""Every shipped Slurm stack: tests that iterate over it check a new stack file unasked."""


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


E2E = ROOT / "tests" / "e2e"

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 in their environment (the controller
# has neither). clusterctl.cli.common makes its rich consoles at import, and rich fixes a console's
# width to COLUMNS when it is set then, so every later CliRunner(env={"COLUMNS": ...}) would be
# ignored and output wrapped at 80. Without them the consoles read COLUMNS at each print.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


E2E_ORDER = (
    "test_vm_soak",  # 880-990, first, at full CPU priority (E2E_FIRST)
    "test_vm_validate",  # 824 s
    "test_vm_power",  # 786
    "test_vm_team",  # 348
    "test_vm_user_path",  # 277
    "test_vm_production_slurm",  # 270
    "test_vm_boot",  # 216
    "test_fresh_machine",  # 137 (two mmdebstrap root filesystems)
    "test_vm_teardown",  # 116
    "test_vm_scratch",  # 102
    "test_vm_shared_gpus",  # ~100 (estimated: one 3-node boot, a few job rounds)
    "test_node_build",  # 69
    "test_vm_cli",  # 59
    "test_vm_supply_chain",  # 51
    "test_vm_benchmarks",  # 45
    "test_vm_gb200_controller",  # 8 (a chroot's slurmctld, no sandbox node)
    "test_known_hosts_ssh",  # 2
    "test_user_cluster_keys",  # 1
    "test_down_keeps_a_mount",  # 0
)
"""Every e2e module, the soak first, then longest first (seconds from a run's JUnit XML through
benchmarks/test_time.py --e2e), so that the workers end together. A module missing here fails
tests/unit/test_suites.py: placing it is a decision about the suite's wall time."""
E2E_FIRST = ("test_vm_soak",)
"""Modules that keep full CPU priority; every other e2e module runs at nice E2E_NICE
(tests/e2e/conftest.py), and so do the sandboxes it boots (nspawn and the nodes' processes
inherit it). The soak's clock is scaled to seconds: beside other sandboxes at equal priority
their boots starved it (measured: 892 s alone, 2,131 s beside the others, failed with power
starts timing out), while alone it left the CPU about 88 % idle (`vmstat 30`). Niced, the others
take what it leaves."""
E2E_NICE = 10
E2E_WORKERS = 3
"""The soak on one worker, the other modules on two, on the 2-core machine CI runs on (measured:
docs/tests.md); each sandbox boots its own network namespaces, and the image cache is shared
under its lock (sandbox/vm/image.py)."""


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects (pytest's own hook)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The suite is the folder: every test under tests/e2e/ carries the `e2e` mark, no other."""
    for item in items:
        if item.path.is_relative_to(E2E):
            item.add_marker(pytest.mark.e2e)

    def weight(item: pytest.Item) -> int:
        stem = item.path.stem
        return E2E_ORDER.index(stem) if stem in E2E_ORDER else len(E2E_ORDER)

    items.sort(key=lambda item: weight(item) if item.path.is_relative_to(E2E) else -1)


def _e2e_selected(config: pytest.Config) -> bool:
    expr = config.option.markexpr.strip()
    return not (expr == "not e2e" or expr.endswith(" and not e2e"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: the fast suite (`-m "not e2e"`, the default, or `-m "... and not e2e"`) on every
    core; a selection with e2e tests on E2E_WORKERS, each worker taking whole modules (a module's
    tests share one booted cluster)."""
    return E2E_WORKERS if _e2e_selected(config) else None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Whole modules to a worker, in E2E_ORDER, for a selection with e2e
    tests: `--dist loadfile` without its reordering by test count."""
    if not _e2e_selected(config):
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False
    return LoadFileScheduling(config, log)


def plan_stack(stack: str, *overrides: str):
    from clusterctl.plan.program import make_plan

    return make_plan(stack, list(overrides))


def node_script(stack: str, name: str, *overrides: str) -> str:
    """One of the GPU nodes' rendered scripts (clusterctl.render.scripts) for a shipped stack."""
    from clusterctl.render.scripts import node_scripts
    from clusterctl.render.site import cloud_site
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec(stack, list(overrides))
    return node_scripts(spec, cloud_site(spec), catalog().require(spec.partitions[0].sku))[name]


def resources(plan, type_: str, *, at_least: int = 1):
    """Resources of one type; fails below `at_least`, so no assertion loop runs empty."""
    found = plan.run.by_type(type_)
    assert len(found) >= at_least, f"expected >= {at_least} {type_}, found {len(found)}"
    return found


def need_tool(name: str) -> str:
    """Path of a real tool the test needs. In CI (CI=true) a missing tool fails the test."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; .ci/run must install it")
        pytest.skip(f"{name} not installed (run .ci/run, or apt-get install it)")
    return path


@pytest.fixture(autouse=True)
def _validation_history(tmp_path_factory, monkeypatch) -> Path:
    """Every test (and the commands it starts) keeps validation runs in a file of its own, never
    in the checkout's .clusterctl/ (clusterctl.validate.history)."""
    path = tmp_path_factory.mktemp("history") / "validate-history.sqlite"
    monkeypatch.setenv("GPU_CLUSTERS_VALIDATE_HISTORY", str(path))
    return path
