"""The stand-in archive's .debs are recompressed xz -> zstd (as Ubuntu ships them): the package
dpkg reads back must hold the same files, modes and control data as Debian's."""

from __future__ import annotations

import subprocess
from pathlib import Path

from clusterctl.sandbox.vm import repo
from tests.conftest import need_tool


def _deb(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        "Package: gpucl-probe\nVersion: 1.0-1\nArchitecture: all\n"
        "Maintainer: t <t@example.org>\nDescription: test\n"
    )
    (tree / "usr" / "bin").mkdir(parents=True)
    tool = tree / "usr" / "bin" / "gpucl-probe"
    tool.write_text("#!/bin/sh\necho " + "x" * 5001 + "\n")  # odd member sizes need ar padding
    tool.chmod(0o755)
    out = tmp_path / "gpucl-probe_1.0-1_all.deb"
    argv = ["dpkg-deb", "--root-owner-group", "-Zxz", "-b", str(tree), str(out)]
    subprocess.run(argv, check=True, capture_output=True)
    return out


def test_a_recompressed_deb_holds_the_same_files_and_control(tmp_path: Path) -> None:
    dpkg_deb = need_tool("dpkg-deb")
    need_tool("zstd")
    deb = _deb(tmp_path)
    (tmp_path / "zst").mkdir()
    new = repo.recompress([deb], tmp_path / "zst")[0]
    members = [name for name, _ in repo.ar_members(new.read_bytes())]
    assert members == ["debian-binary", "control.tar.xz", "data.tar.zst"]

    def listing(path: Path) -> list[str]:
        out = subprocess.run([dpkg_deb, "-c", str(path)], check=True, capture_output=True)
        return [
            " ".join(line.split()[:3] + line.split()[5:])
            for line in out.stdout.decode().splitlines()
        ]

    assert listing(new) == listing(deb)
    assert repo.control(new) == repo.control(deb)
    out = tmp_path / "x"
    subprocess.run([dpkg_deb, "-x", str(new), str(out)], check=True)
    assert (out / "usr/bin/gpucl-probe").read_text().count("x") == 5001


def test_ar_round_trip_keeps_members_and_padding() -> None:
    members = [("debian-binary", b"2.0\n"), ("a", b"odd"), ("b", b"even")]
    assert repo.ar_members(repo.ar_archive(members)) == members
