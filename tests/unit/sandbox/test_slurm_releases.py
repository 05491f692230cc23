"""The sandbox runs either Slurm release around Azure's 25.11 (sid's 26.05 by default, trixie's
24.11): the stand-in Microsoft archive carries the chosen release's files as slurm-smd*, the sid
libraries it needs ride with it, and the stand-in Ubuntu archive stays trixie's either way."""

from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import repo
from tests.conftest import need_tool

SLURM = ("slurmd", "slurmctld", "slurmdbd", "slurm-client", "slurm-wlm-basic-plugins",
         "slurm-wlm-mysql-plugin", "libslurm-dev", "slurm-wlm-basic-plugins-dev", "sackd",
         "libpam-slurm-adopt")  # fmt: skip


def _deb(out: Path, name: str, version: str, depends: str = "", source: str = "") -> Path:
    tree = out / f"tree-{name}-{version}"
    (tree / "DEBIAN").mkdir(parents=True)
    control = f"Package: {name}\n" + (f"Source: {source}\n" if source else "")
    control += f"Version: {version}\nArchitecture: amd64\n"
    control += f"Depends: {depends}\n" if depends else ""
    control += "Maintainer: t <t@example.org>\nDescription: test\n"
    (tree / "DEBIAN" / "control").write_text(control)
    (tree / "usr" / "share" / "doc" / name).mkdir(parents=True)
    (tree / "usr" / "share" / "doc" / name / "version").write_text(version)
    deb = out / f"{name}_{version}_amd64.deb"
    argv = ["dpkg-deb", "--root-owner-group", "-Zxz", "-b", str(tree), str(deb)]
    subprocess.run(argv, check=True, capture_output=True)
    return deb


def _packages(archive: Path, suite: str) -> dict[str, str]:
    text = gzip.decompress(
        (archive / "dists" / suite / "main" / "binary-amd64" / "Packages.gz").read_bytes()
    ).decode()
    out = {}
    for stanza in text.split("\n\n"):
        fields = dict(x.split(": ", 1) for x in stanza.splitlines() if ": " in x and x[0] != " ")
        if fields:
            out[fields["Package"]] = fields["Version"]
    return out


@pytest.fixture(scope="module")
def downloads(tmp_path_factory) -> tuple[Path, Path]:
    need_tool("dpkg-deb")
    need_tool("zstd")
    need_tool("gpg")
    root = tmp_path_factory.mktemp("debs")
    trixie, sid = root / "debs", root / "debs-sid"
    trixie.mkdir()
    sid.mkdir()
    for name in SLURM:
        _deb(trixie, name, "24.11.5-4", "libhwloc15 (>= 2.12.0), munge")
        _deb(sid, name, "26.05.5-1", "libhwloc15 (>= 2.15.0), libllhttp9.4, libmunge2 (>= 0.5.8)")
    _deb(trixie, "libslurm42t64", "24.11.5-4")
    _deb(sid, "libslurm45t64", "26.05.5-1")
    _deb(trixie, "munge", "0.5.16-1")
    _deb(trixie, "libhwloc15", "2.12.0-4")
    _deb(sid, "libhwloc15", "2.15.0-1", source="hwloc")
    # trixie's plugins pin trixie's library: sid's library must bring sid's plugins
    _deb(trixie, "libhwloc-plugins", "2.12.0-4", "libhwloc15 (<< 2.12.0A)", source="hwloc")
    _deb(sid, "libhwloc-plugins", "2.15.0-1", "libhwloc15 (<< 2.15.0A)", source="hwloc")
    _deb(sid, "libllhttp9.4", "9.4.0-1", "libjwt2 (>= 1.17)")
    _deb(sid, "libjwt2", "1.17.2-1")  # needed through libllhttp9.4: trixie's is too old
    _deb(trixie, "libjwt2", "1.12.0-1")
    _deb(sid, "libmunge2", "0.5.18-1")  # apt downloads sid's; trixie's 0.5.16 will do
    _deb(trixie, "libmunge2", "0.5.16-1")
    return trixie, sid


@pytest.mark.parametrize("release", repo.SLURM_VERSIONS)
def test_each_release_fills_the_microsoft_archive_and_leaves_ubuntus_trixie(
    downloads, tmp_path: Path, release: str
) -> None:
    trixie, sid = downloads
    sid_debs = sid if release == "26.05" else None
    built = repo.build_repo(trixie, tmp_path / "repo", log=lambda _m: None, sid_debs=sid_debs)
    ms = _packages(built / "microsoft" / "repos" / "slurm-ubuntu-jammy", "stable")
    ubuntu = _packages(built / "debian", "sandbox")
    debian_version = {"26.05": "26.05.5-1", "24.11": "24.11.5-4"}[release]
    smd = {k: v for k, v in ms.items() if k.startswith("slurm-smd")}
    assert set(smd) == set(repo.SMD_PACKAGES)
    assert "slurm-smd-sackd" in smd and "slurm-smd-libpam-slurm-adopt" in smd
    assert set(smd.values()) == {f"25.11.5-1gpucl+deb{debian_version}"}
    # Ubuntu's stand-in: trixie's libraries and none of Slurm, for either release
    assert ubuntu["libhwloc15"] == "2.12.0-4"
    assert not any(repo.SLURM_DEB.match(name) for name in ubuntu)
    assert "munge" in ubuntu
    assert ms.pop("pmix") == repo.PMIX_VERSION
    extra = {k: v for k, v in ms.items() if not k.startswith("slurm-smd")}
    if release == "26.05":
        assert extra == {
            "libhwloc15": "2.15.0-1",
            "libhwloc-plugins": "2.15.0-1",
            "libllhttp9.4": "9.4.0-1",
            "libjwt2": "1.17.2-1",
        }
    else:
        assert extra == {}


def test_the_release_comes_from_the_flag_then_the_environment_then_the_default(
    monkeypatch,
) -> None:
    monkeypatch.delenv(repo.SLURM_ENV, raising=False)
    assert repo.slurm_version() == "26.05"
    monkeypatch.setenv(repo.SLURM_ENV, "24.11")
    assert repo.slurm_version() == "24.11"
    assert repo.slurm_version("26.05") == "26.05"
    with pytest.raises(ValueError, match=r"use one of 26\.05, 24\.11"):
        repo.slurm_version("25.11")


def test_the_pmix_stand_in_matches_the_pin_the_user_data_installs() -> None:
    import yaml

    from tests.conftest import ROOT

    pin = yaml.safe_load((ROOT / "config" / "versions.yaml").read_text())["nodePackages"]["pmix"][
        "version"
    ]
    assert repo.PMIX_VERSION.startswith(pin)  # the user-data asks for "<pin>*"
