"""The e2e suite's CPU priorities (tests/conftest.py E2E_FIRST, E2E_NICE)."""

from __future__ import annotations

import os

import pytest

from tests.conftest import E2E_FIRST, E2E_NICE


@pytest.fixture(scope="module", autouse=True)
def _cpu_priority(request: pytest.FixtureRequest) -> None:
    """Before the module's own fixtures boot anything: the soak's worker at nice 0, every other
    module's at E2E_NICE. A worker runs modules one after another, so each sets it again (going
    back to 0 needs root, which the sandbox needs anyway; elsewhere the module stays niced)."""
    stem = request.module.__name__.rsplit(".", 1)[-1]
    want = 0 if stem in E2E_FIRST else E2E_NICE
    try:
        os.setpriority(os.PRIO_PROCESS, 0, want)
    except PermissionError:
        os.setpriority(os.PRIO_PROCESS, 0, max(want, os.getpriority(os.PRIO_PROCESS, 0)))
