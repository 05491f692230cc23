"""The github.com stand-in serves pyxis's real release source at the pinned tag, checked by
sha256 (substitution github-downloads); a pin with no vendored archive, or a changed archive, is
refused."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import github
from tests.conftest import need_tool


def test_pyxis_is_served_as_its_real_release_at_the_pinned_tag(tmp_path: Path) -> None:
    need_tool("git"), need_tool("openssl")
    pins = github.Pins.from_catalog()
    github.build(tmp_path / "gh", pins)
    bare = tmp_path / "gh" / "git" / "NVIDIA" / "pyxis.git"
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", pins.pyxis_tag, str(bare), str(clone)],
        check=True, capture_output=True,
    )  # fmt: skip
    makefile = (clone / "Makefile").read_text()
    assert f"PYXIS_VER ?= {pins.pyxis_tag.removeprefix('v')}" in makefile
    for source in ("pyxis_slurmstepd.c", "pyxis_slurmd.c", "enroot.c", "spank_pyxis.lds"):
        assert (clone / source).is_file(), source
    assert "gpucl" not in (clone / "pyxis_slurmstepd.c").read_text()


def test_a_changed_or_missing_archive_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(github, "VENDORED", {**github.VENDORED, "pyxis-0.24.0.tar.gz": "0" * 64})
    with pytest.raises(RuntimeError, match="sha256"):
        github._vendored("pyxis-0.24.0.tar.gz", tmp_path)
    with pytest.raises(RuntimeError, match=re.escape("no vendored pyxis-9.9.9.tar.gz")):
        github._vendored("pyxis-9.9.9.tar.gz", tmp_path)


def test_the_archive_unpacks_on_a_python_without_extraction_filters(
    tmp_path: Path, monkeypatch
) -> None:
    """Debian 12's python3 (3.11.2) predates extractall's filter= (3.11.4): the README's first
    command, run with it, failed building the github stand-in with a TypeError."""
    import tarfile

    plain = tarfile.TarFile.extractall

    def extractall(self, path=".", members=None, *, numeric_owner=False):  # 3.11.2's signature
        return plain(self, path, members, numeric_owner=numeric_owner)

    monkeypatch.delattr(tarfile, "data_filter", raising=False)  # 3.11.2 has none
    monkeypatch.setattr(tarfile.TarFile, "extractall", extractall)
    version = github.Pins.from_catalog().pyxis_tag.removeprefix("v")
    top = github._vendored(f"pyxis-{version}.tar.gz", tmp_path)
    assert top.parent == tmp_path and (top / "pyxis_slurmstepd.c").is_file()


def test_pins_map_to_the_stand_ins_as_built_so_a_later_change_is_refused(
    tmp_path: Path, monkeypatch
) -> None:
    """The user-data's pins are rewritten to the stand-ins' (substitution pinned-commits), taken
    when the stand-in was built, never from what is served when a node boots: a served .deb that
    changed afterwards fails the node's check, as a changed release does on the cloud."""
    import dataclasses
    import hashlib

    from tests.conftest import node_script

    need_tool("git"), need_tool("openssl"), need_tool("curl")
    name = "enroot_4.1.2-1_amd64.deb"
    real_pin = "c0ffee" * 10 + "c0fe"
    pins = dataclasses.replace(github.Pins.from_catalog(), enroot_sha256=((name, real_pin),))
    out = tmp_path / "gh"
    github.build(out, pins)
    mapping = github.commit_map(out, pins)
    served = out / "root/NVIDIA/enroot/releases/download/v4.1.2" / name
    assert mapping[real_pin] == hashlib.sha256(served.read_bytes()).hexdigest()
    assert mapping[pins.pyxis_commit] != pins.pyxis_commit  # the stand-in repository's commit
    fetch = tmp_path / "gpucl-fetch.sh"
    fetch.write_text(node_script("azure-h100", "gpucl-fetch.sh"))

    def node_fetches() -> subprocess.CompletedProcess:
        dest = tmp_path / "enroot.deb"
        dest.unlink(missing_ok=True)
        return subprocess.run(["bash", str(fetch), f"file://{served}", mapping[real_pin],
                               str(dest)], capture_output=True, text=True, timeout=30)  # fmt: skip

    assert node_fetches().returncode == 0
    served.write_bytes(served.read_bytes() + b"\0")  # the lab serves it changed once
    refused = node_fetches()
    assert refused.returncode == 1 and "REFUSED" in refused.stderr
    assert github.commit_map(out, pins)[real_pin] == mapping[real_pin]  # not re-hashed on boot
