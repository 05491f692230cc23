"""up/down lifecycle: no trace after down, after a crash mid-up, or after a failure in up."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from clusterctl import sandbox
from clusterctl.sandbox import SandboxError, state

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root"),
]

REPO = Path(__file__).resolve().parents[3]
PR_SET_CHILD_SUBREAPER = 36


def test_down_leaves_no_trace_and_is_idempotent(workdir, render, no_trace):
    nodes = ["a1", "a2"]
    site = sandbox.sandbox_site(nodes, workdir)
    sandbox.up(render(site, nodes), nodes, workdir=workdir, site=site)
    assert sandbox.status(workdir).healthy
    sandbox.down(workdir)
    no_trace(workdir)
    sandbox.down(workdir)
    assert sandbox.status(workdir) is None


def test_failure_during_up_tears_down_before_raising(workdir, render, no_trace):
    nodes = ["b1", "b2", "b3"]
    site = sandbox.sandbox_site(nodes, workdir)

    def explode(message: str) -> None:
        if message.startswith("starting slurmd 2/"):
            raise RuntimeError("injected failure")

    with pytest.raises(RuntimeError, match="injected failure"):
        sandbox.up(render(site, nodes), nodes, workdir=workdir, site=site, progress=explode)
    no_trace(workdir)


CRASHING_UP = """
import os, signal, sys
sys.path.insert(0, {repo!r})
from clusterctl import sandbox
nodes = ["c1", "c2", "c3", "c4"]
site = sandbox.sandbox_site(nodes, {workdir!r})
files = {files!r}

def crash(message):
    if message.startswith("starting slurmd 3/"):
        os.kill(os.getpid(), signal.SIGKILL)

sandbox.up(files, nodes, workdir={workdir!r}, site=site, progress=crash)
"""


@pytest.fixture
def subreaper():
    """Orphans of a killed child re-parent to this process, so `down` can reap them."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    yield
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def test_down_cleans_up_after_up_was_killed_midway(workdir, render, no_trace, subreaper):
    nodes = ["c1", "c2", "c3", "c4"]
    files = render(sandbox.sandbox_site(nodes, workdir), nodes)
    code = CRASHING_UP.format(repo=str(REPO), workdir=str(workdir), files=files)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], timeout=60)
    assert proc.returncode == -signal.SIGKILL
    left = state.load(workdir)
    assert left is not None and left.phase == "starting"
    assert any(sandbox.status(workdir).daemons.values())  # daemons outlived the crash
    site = sandbox.sandbox_site(nodes, workdir)
    with pytest.raises(SandboxError, match="run `down`"):
        sandbox.up(files, nodes, workdir=workdir, site=site)
    sandbox.down(workdir)
    no_trace(workdir)


def test_refuses_without_root(monkeypatch, workdir):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxError, match="needs root"):
        sandbox.up({}, ["n1"], workdir=workdir, site=sandbox.sandbox_site(["n1"], workdir))


def test_refuses_naming_the_missing_packages(monkeypatch, workdir):
    import shutil

    real_which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name: None if name in ("slurmd", "munged") else real_which(name)
    )
    with pytest.raises(SandboxError, match="apt-get install munge slurmd"):
        sandbox.up({}, ["n1"], workdir=workdir, site=sandbox.sandbox_site(["n1"], workdir))
    assert list(workdir.iterdir()) == []
