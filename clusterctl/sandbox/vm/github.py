"""The github.com stand-in: what the user-data fetches from GitHub, built locally, served over TLS.

The cloud's user-data fetches enroot's release .debs, clones pyxis and LBNL NHC by tag, all over
https from github.com. The lab cannot reach GitHub (nor can CI), so this serves pyxis's real release
source (files/vendor, checked against its sha256) and stand-ins for enroot and NHC from
files/github (see each one's README), laid out as github.com serves them:
  root/NVIDIA/enroot/releases/download/v<V>/enroot_<V>-1_amd64.deb (+ enroot+caps)
  git/NVIDIA/pyxis.git, git/mej/nhc.git   bare repositories with the pinned tag (smart HTTP)
  tls/ca.crt, tls/server.{crt,key}         a local CA (trusted by the image) and github.com's cert
The lab server answers https://github.com with these; every node's /etc/hosts maps github.com to it.
A pinned commit or sha256 in the user-data is the real project's; `commit_map()` gives the
stand-in's for it (the one declared rewrite of the user-data this needs).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from .debs import ARCH, build_deb

HOST = "github.com"
SOURCES = Path(__file__).parent / "files" / "github"
VENDOR = Path(__file__).parent / "files" / "vendor"
VENDORED = {
    "pyxis-0.24.0.tar.gz": "063653ba39125ac29796cc6079701d1ec34dd4c5baf698efacc0f36bf3619681",
}
"""Upstream release sources served as themselves (files/vendor/README.md), by sha256."""
# Fixed dates make the stand-in repositories' commits the same on every build.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "gpucl sandbox",
    "GIT_AUTHOR_EMAIL": "sandbox@localhost",
    "GIT_COMMITTER_NAME": "gpucl sandbox",
    "GIT_COMMITTER_EMAIL": "sandbox@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


@dataclass(frozen=True)
class Pins:
    """What the user-data pins (config/versions.yaml nodePackages)."""

    enroot: str
    enroot_sha256: tuple[tuple[str, str], ...]
    """(file name, pinned sha256) of each enroot .deb whose pin is recorded."""
    pyxis_tag: str
    pyxis_commit: str
    nhc_tag: str
    nhc_commit: str

    @classmethod
    def from_catalog(cls) -> Pins:
        from clusterctl.spec.catalog import catalog

        pkgs = catalog().versions["nodePackages"]
        shas = pkgs["enroot"].get("sha256") or {}
        return cls(
            enroot=str(pkgs["enroot"]["version"]),
            enroot_sha256=tuple(sorted((n, str(h).lower()) for n, h in shas.items() if h)),
            pyxis_tag=str(pkgs["pyxis"]["gitTag"]),
            pyxis_commit=str(pkgs["pyxis"]["gitCommit"]),
            nhc_tag=str(pkgs["nhc"]["lbnl"]["gitTag"]),
            nhc_commit=str(pkgs["nhc"]["lbnl"]["gitCommit"]),
        )


def digest(pins: Pins) -> str:
    # debs.py builds the enroot .debs: a change there is a change of the stand-in
    sources = Path(__file__).read_bytes() + Path(__file__).with_name("debs.py").read_bytes()
    h = hashlib.sha256(sources + json.dumps(asdict(pins)).encode())
    for path in sorted([*SOURCES.rglob("*"), *VENDOR.rglob("*")]):
        if path.is_file():
            h.update(str(path.relative_to(SOURCES.parent)).encode() + b"\0")
            h.update(path.read_bytes() + oct(path.stat().st_mode & 0o111).encode())
    return h.hexdigest()[:12]


def build(out: Path, pins: Pins) -> None:
    """Build the stand-in tree under `out` (which must not exist)."""
    out.mkdir(parents=True)
    _tls(out / "tls")
    releases = out / "root" / "NVIDIA" / "enroot" / "releases" / "download" / f"v{pins.enroot}"
    releases.mkdir(parents=True)
    _enroot_debs(releases, pins.enroot)
    with tempfile.TemporaryDirectory() as tmp:
        pyxis = _vendored(f"pyxis-{pins.pyxis_tag.removeprefix('v')}.tar.gz", Path(tmp))
        commits = {
            "pyxis": _git_repo(pyxis, out / "git" / "NVIDIA" / "pyxis.git", pins.pyxis_tag),
        }
    commits |= {
        "nhc": _git_repo(SOURCES / "nhc", out / "git" / "mej" / "nhc.git", pins.nhc_tag),
    }
    (out / "commits.json").write_text(json.dumps(commits, indent=1) + "\n")
    # Each stand-in .deb's sha256, recorded once here: the pins the user-data gets are these, not
    # a hash of whatever is served when a node boots (a file changed later must be refused).
    built = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in releases.glob("*.deb")}
    (out / "sha256.json").write_text(json.dumps(built, indent=1, sort_keys=True) + "\n")


def commit_map(out: Path, pins: Pins) -> dict[str, str]:
    """Real pin -> the stand-in's: each pinned commit -> the stand-in repository's commit at the
    same tag; each pinned sha256 of an enroot .deb -> the sha256 of the stand-in .deb served
    under the same name. The user-data's checks stay: what the lab serves must match these, so
    a file changed after the build is refused here as a changed release is on the cloud."""
    commits = json.loads((out / "commits.json").read_text())
    built = json.loads((out / "sha256.json").read_text())
    # the lab serves amd64 only: an arm64 pin has no stand-in and is left as it is
    shas = {real: built[name] for name, real in pins.enroot_sha256 if name in built}
    return {pins.nhc_commit: commits["nhc"], pins.pyxis_commit: commits["pyxis"], **shas}


def _vendored(name: str, into: Path) -> Path:
    """The release archive `name` from files/vendor, checked against its sha256, unpacked under
    `into`; returns its one top folder. A pin with no vendored archive is an error, not a
    silent stand-in."""
    archive = VENDOR / name
    if name not in VENDORED or not archive.is_file():
        raise RuntimeError(
            f"github stand-in: no vendored {name} for the pinned version (config/versions.yaml); "
            f"add the release archive to {VENDOR} with its sha256 in VENDORED"
        )
    got = hashlib.sha256(archive.read_bytes()).hexdigest()
    if got != VENDORED[name]:
        raise RuntimeError(f"github stand-in: {archive} has sha256 {got}, not {VENDORED[name]}")
    with tarfile.open(archive) as tar:
        # extractall's filter= (PEP 706) came in Python 3.11.4; Debian 12's python3 is 3.11.2 and
        # has none. The sha256 above already fixes every member, so there it unpacks as it is.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)
    (top,) = [p for p in into.iterdir() if p.is_dir()]
    return top


def _tls(tls: Path) -> None:
    tls.mkdir(parents=True)
    openssl = ["openssl"]
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    subprocess.run(
        [
            *openssl,
            "req",
            "-x509",
            *ec,
            "-keyout",
            str(tls / "ca.key"),
            "-out",
            str(tls / "ca.crt"),
            "-days",
            "3650",
            "-subj",
            "/CN=gpucl sandbox CA (stands in for the public CAs)",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            *openssl,
            "req",
            *ec,
            "-keyout",
            str(tls / "server.key"),
            "-out",
            str(tls / "server.csr"),
            "-subj",
            f"/CN={HOST}",
        ],
        check=True,
        capture_output=True,
    )
    ext = tls / "server.ext"
    ext.write_text(
        f"subjectAltName=DNS:{HOST}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
    )
    subprocess.run(
        [
            *openssl,
            "x509",
            "-req",
            "-in",
            str(tls / "server.csr"),
            "-CA",
            str(tls / "ca.crt"),
            "-CAkey",
            str(tls / "ca.key"),
            "-CAcreateserial",
            "-out",
            str(tls / "server.crt"),
            "-days",
            "3650",
            "-extfile",
            str(ext),
        ],
        check=True,
        capture_output=True,
    )


def _enroot_debs(releases: Path, version: str) -> None:
    """enroot and enroot+caps as the release names them, with the real packages' dependencies."""
    src = SOURCES / "enroot"
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "enroot"
        shutil.copytree(src / "tree", tree, symlinks=True)
        enroot = tree / "usr" / "bin" / "enroot"
        enroot.write_text(enroot.read_text().replace("@VERSION@", version))
        deb_version = f"{version}-1"
        common = {
            "Version": deb_version,
            "Architecture": ARCH,
            "Maintainer": "gpu-clusters sandbox <sandbox@localhost>",
        }
        build_deb(
            tree,
            {
                "Package": "enroot",
                **common,
                "Depends": "bash (>= 4.2), curl, gawk | mawk, jq (>= 1.5), parallel, passwd, "
                "squashfs-tools, zstd, bsdmainutils",
                "Description": "gpucl sandbox stand-in for NVIDIA's enroot (no container runtime)",
            },
            releases,
        )
        caps = Path(tmp) / "caps"
        (caps / "DEBIAN").mkdir(parents=True)
        shutil.copy2(src / "caps" / "postinst", caps / "DEBIAN" / "postinst")
        build_deb(
            caps,
            {
                "Package": "enroot+caps",
                **common,
                "Depends": f"enroot (= {deb_version}), libcap2-bin",
                "Description": "gpucl sandbox stand-in for NVIDIA's enroot+caps",
            },
            releases,
        )
    for deb in releases.glob("*.deb"):  # build_deb names them <pkg>_<version>_<arch>.deb
        assert deb.name.endswith(f"_{deb_version}_{ARCH}.deb"), deb.name


def _git_repo(src: Path, bare: Path, tag: str) -> str:
    """A bare repository holding `src` as one commit tagged `tag`; returns the commit id."""
    env = {**os.environ, **_GIT_ENV}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        shutil.copytree(src, work, symlinks=True)

        def git(*args: str, cwd: Path = work) -> str:
            return subprocess.run(
                ["git", "-c", "init.defaultBranch=main", *args],
                cwd=cwd,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()

        git("init", "-q")
        git("add", "-A")
        git("commit", "-q", "-m", f"gpucl sandbox stand-in at {tag}")
        git("tag", tag)
        commit = git("rev-parse", "HEAD")
        bare.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "-q", "--bare", str(work), str(bare), cwd=Path(tmp))
    return commit
