"""Two sandboxes on one machine (two users, or the e2e suite's two workers) share the image cache:
one prepares it while the other waits, bounded, and a file of the image that running nodes read
is replaced whole and only when it changes."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import image, repo


def _hold(cache_root: Path, held, release) -> None:
    with image.cache_lock(cache_root, log=lambda _m: None):
        held.set()
        release.wait(30)


def test_a_second_sandbox_waits_for_the_cache_and_gives_up_at_its_bound(tmp_path: Path) -> None:
    cache = tmp_path / "sandbox-image"
    ctx = multiprocessing.get_context("fork")
    held, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(cache, held, release))
    holder.start()
    try:
        assert held.wait(30)
        said: list[str] = []
        t0 = time.monotonic()
        busy = image.cache_lock(cache, log=said.append, wait_s=1)
        with pytest.raises(TimeoutError, match="another sandbox held it for 1 s"), busy:
            pass
        assert 1 <= time.monotonic() - t0 < 10
        assert said == [f"image: waiting for another sandbox to finish preparing {cache}"]
        release.set()
        holder.join(30)
        with image.cache_lock(cache, log=said.append, wait_s=5):  # released: taken at once
            pass
        assert len(said) == 1
    finally:
        release.set()
        holder.join(30)


def test_an_image_file_is_replaced_whole_and_only_when_it_changes(tmp_path: Path) -> None:
    keyring = tmp_path / "gpucl-sandbox.gpg"
    repo._write_if_changed(keyring, b"key one")
    inode = os.stat(keyring).st_ino
    repo._write_if_changed(keyring, b"key one")
    assert os.stat(keyring).st_ino == inode  # the same bytes: untouched
    repo._write_if_changed(keyring, b"key one" + b"key two")
    assert keyring.read_bytes() == b"key onekey two"
    assert os.stat(keyring).st_ino != inode  # a new file renamed over: no reader sees it half
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpucl-sandbox.gpg"]
