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
