"""`down` removes the nodes' disks in parallel `rm -rf` runs but never crosses a mount: one that
failed to come off keeps what it shows, and down says what it could not remove. Root (a bind
mount); the half without a mount is tests/unit/sandbox/test_vmstate.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import vmstate
from tests.conftest import need_tool
from tests.unit.sandbox.test_vmstate import nested_node_dirs


def test_down_removes_nested_node_dirs_at_once_but_never_crosses_a_mount(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the e2e suite runs as root in CI")
        pytest.skip("a bind mount needs root (the e2e suite runs as root)")
    need_tool("mount")
    nodes = tmp_path / "nodes"
    state = vmstate.VmState(workdir=str(tmp_path), sid=vmstate.sandbox_id(tmp_path))
    dirs = nested_node_dirs(state, nodes)
    keep = tmp_path / "host-data"
    keep.mkdir()
    (keep / "precious").write_text("mine")
    (dirs[1] / "mnt").mkdir()
    subprocess.run(["mount", "--bind", str(keep), str(dirs[1] / "mnt")], check=True)
    said: list[str] = []
    try:
        vmstate.teardown(state, log=said.append)
        assert (keep / "precious").read_text() == "mine"
        assert not dirs[0].exists() and not dirs[2].exists() and not dirs[3].exists()
        inside = " (a mount is still inside)"
        assert said == [f"down: could not remove {dirs[1]}{inside}",
                        f"down: could not remove {nodes}{inside}"]  # fmt: skip
    finally:
        subprocess.run(["umount", str(dirs[1] / "mnt")], check=False)
