"""One way to boot the stack's nodes for the VM sandbox tests (root only)."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import boot, report
from tests.conftest import need_tool

ROOT = Path(__file__).resolve().parents[3]
TOOLS = ("systemd-nspawn", "mmdebstrap", "nsenter", "ip", "gpg", "dpkg-deb")


def need_sandbox() -> None:
    """Root and the sandbox's tools: skipped locally without them, failed in CI."""
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the VM sandbox tests run as root in CI")
        pytest.skip("the VM sandbox needs root (network namespaces, overlay mounts, nspawn)")
    for tool in TOOLS:
        need_tool(tool)  # in CI a missing tool fails: .ci/run installs them


@contextmanager
def booted_stack(tmp_path_factory, *, nodes: int, plan: Path | None = None, stack="azure-h100"):
    """Boot `stack` (or an already rendered plan folder) with `nodes` GPU nodes; always down."""
    need_sandbox()
    if plan is None:
        plan = tmp_path_factory.mktemp("plan")
        subprocess.run(
            [sys.executable, "-m", "clusterctl", "plan", "-s", stack, "--out", str(plan),
             "--set", f"partitions[0].nodes={nodes}"],  # slurm.conf lists what boots
            cwd=ROOT, check=True, capture_output=True,
        )  # fmt: skip
    specs = boot.cluster_from_plan(plan, nodes=nodes)
    workdir = tmp_path_factory.mktemp("vm-sandbox")
    try:
        yield specs, workdir, boot.up(specs, workdir, timeout=600)
    finally:
        boot.down(workdir)
        assert report.leftovers(workdir) == []


def other_sandboxes() -> list[str]:
    """The labs of the VM sandboxes running on this machine now: each has one network namespace,
    gpucl-<sid>-lab, with its lab server in it (a namespace a killed run left has no process)."""
    netns = Path("/run/netns")
    found = sorted(p.name for p in netns.glob("gpucl-*-lab")) if netns.is_dir() else []
    pids = [subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True).stdout
            for n in found]  # fmt: skip
    return [n for n, p in zip(found, pids, strict=True) if p.split()]
