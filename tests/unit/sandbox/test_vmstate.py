"""The VM sandbox's state file survives a SIGKILL during a save (a temporary state file
that two `down`s did not remove). No root needed: only files."""

from __future__ import annotations

import json
from pathlib import Path

from clusterctl.sandbox.vm import vmstate


def _state(workdir: Path, dirs: list[Path]) -> vmstate.VmState:
    state = vmstate.VmState(workdir=str(workdir), sid=vmstate.sandbox_id(workdir))
    for d in dirs:
        d.mkdir()
        state.resources.append(vmstate.Resource(kind="dir", name=str(d)))
    return state


def test_a_newer_temporary_copy_is_read_and_down_removes_both(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    state = _state(tmp_path, [one])
    state.save()
    # killed between writing the copy and renaming it: the copy records one more resource
    state.resources.append(vmstate.Resource(kind="dir", name=str(two)))
    two.mkdir()
    tmp = tmp_path / (vmstate.STATE_FILE + ".tmp")
    from dataclasses import asdict

    tmp.write_text(json.dumps(asdict(state)))
    loaded = vmstate.load(tmp_path)
    assert loaded is not None and [r.name for r in loaded.resources] == [str(one), str(two)]
    vmstate.teardown(loaded, log=lambda m: None)
    assert not one.exists() and not two.exists()
    assert not tmp.exists() and not (tmp_path / vmstate.STATE_FILE).exists()
    assert vmstate.load(tmp_path) is None  # a second down finds nothing


def test_a_torn_temporary_copy_is_ignored_and_removed(tmp_path: Path) -> None:
    one = tmp_path / "one"
    _state(tmp_path, [one]).save()
    tmp = tmp_path / (vmstate.STATE_FILE + ".tmp")
    tmp.write_text('{"workdir": "')
    loaded = vmstate.load(tmp_path)
    assert loaded is not None and [r.name for r in loaded.resources] == [str(one)]
    vmstate.teardown(loaded, log=lambda m: None)
    assert not tmp.exists() and not one.exists()


def test_only_a_torn_first_save_still_lets_down_clean_up(tmp_path: Path) -> None:
    tmp = tmp_path / (vmstate.STATE_FILE + ".tmp")
    tmp.write_text("{")
    loaded = vmstate.load(tmp_path)
    assert loaded is not None and loaded.resources == []
    vmstate.teardown(loaded, log=lambda m: None)
    assert not tmp.exists()


def nested_node_dirs(state: vmstate.VmState, nodes: Path) -> list[Path]:
    """Four node folders of 50 files each under `nodes`, recorded in `state` after `nodes`."""
    dirs = [nodes / f"n{i}" for i in range(4)]
    state.resources = [vmstate.Resource(kind="dir", name=str(nodes))]
    for d in dirs:
        (d / "usr" / "lib").mkdir(parents=True)
        for j in range(50):
            (d / "usr" / "lib" / f"f{j}").write_text("x")
        state.resources.append(vmstate.Resource(kind="dir", name=str(d)))
    return dirs


def test_down_removes_nested_node_dirs_at_once(tmp_path: Path) -> None:
    """The nodes' disks go in parallel `rm -rf` runs, the folder holding them last. The half with
    a mount inside (root) is tests/e2e/test_down_keeps_a_mount.py."""
    nodes = tmp_path / "nodes"
    nodes.mkdir()
    state = _state(tmp_path, [nodes / "x"])  # a recorded dir
    nested_node_dirs(state, nodes)
    said: list[str] = []
    vmstate.teardown(state, log=said.append)
    assert not nodes.exists() and said == []


def test_down_waits_for_a_loop_device_the_kernel_still_holds(tmp_path: Path, monkeypatch) -> None:
    """CI once found `disks.img`'s loop device still attached right after `down`: the kernel drops
    a `mount -o loop` device a moment after the last close, and `losetup -d` answers busy until
    then. A stand-in `losetup` lists the device, busy, for its first three listings."""
    backing = tmp_path / "disks.img"
    backing.touch()
    counter = tmp_path / "listings"
    counter.write_text("0")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "losetup"
    fake.write_text(
        "#!/bin/sh\n"
        f"n=$(cat {counter})\n"
        'case "$1" in\n'
        f"  -l) echo $((n + 1)) > {counter}\n"
        f'      [ "$n" -lt 3 ] && echo "/dev/loop7 {backing}"; exit 0 ;;\n'
        '  -d) [ "$n" -lt 3 ] && { echo "losetup: $2: busy" >&2; exit 1; }; exit 0 ;;\n'
        "esac\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    state = vmstate.VmState(workdir=str(tmp_path), sid=vmstate.sandbox_id(tmp_path))
    state.resources.append(vmstate.Resource(kind="loop", name=str(backing)))
    logged: list[str] = []
    vmstate.teardown(state, log=logged.append)
    assert int(counter.read_text()) > 3, "down returned while the device was still listed"
    assert logged == []


def test_down_says_which_loop_device_stayed(tmp_path: Path, monkeypatch) -> None:
    backing = tmp_path / "disks.img"
    backing.touch()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "losetup"
    fake.write_text(
        f'#!/bin/sh\n[ "$1" = -l ] && echo "/dev/loop7 {backing}"\n'
        '[ "$1" = -d ] && exit 1\nexit 0\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    state = vmstate.VmState(workdir=str(tmp_path), sid=vmstate.sandbox_id(tmp_path))
    state.resources.append(vmstate.Resource(kind="loop", name=str(backing)))
    logged: list[str] = []
    monkeypatch.setattr(vmstate, "_LOOP_GRACE", 0.5)
    vmstate.teardown(state, log=logged.append)
    assert logged == [
        f"down: could not release loop {backing}: /dev/loop7 still attached after 0.5 s"
    ]
