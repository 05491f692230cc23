"""The local stand-in apt repository: what the user-data installs, with no network at boot.

Two archives, served by the lab server (labserver.py) and signed with a local key:
  debian/     stands in for the Ubuntu archive: Debian trixie's .debs as downloaded at image build
              (munge is Debian's real package: its install makes a key and starts munged, as on
              the cloud), plus the nfs-common / nfs-kernel-server stand-ins (no NFS in this kernel).
              Their contents are recompressed from xz to zstd, as Ubuntu's archive ships its .debs:
              unpacking xz cost the nodes ~7 CPU-s of a 1+4 boot that Ubuntu's VMs do not spend.
  microsoft/  stands in for packages.microsoft.com/repos/slurm-ubuntu-jammy: slurm-smd* packages
              that repackage Debian's Slurm binaries (sid's 26.05 by default, or trixie's 24.11:
              the two releases around Azure's 25.11) WITHOUT Debian's maintainer scripts, so
              (like Microsoft's) they create no `slurm` user and start no daemon, and ship
              upstream's unit files. Versioned 25.11.5-..., so user-data pins "25.11.5*" match.
              With 26.05 it also carries the few sid libraries that Slurm build needs and trixie
              lacks or has too old (sid_libraries: libhwloc15 2.15 with its plugins, libllhttp9.4,
              libhttp-parser2.9), so debian/ stays trixie's for either version.
"""

from __future__ import annotations

import email.utils
import gzip
import hashlib
import lzma
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .debs import ARCH, build_deb

STANDINS = Path(__file__).parent / "files" / "standins"
HPC_IMAGE_FILES = Path(__file__).parent / "files" / "hpc-image"
"""What the Azure HPC image ships outside packages (stand-ins: substitutions.py)."""
SMD_VERSION = "25.11.5-1gpucl+deb{debian}"
SLURM_VERSIONS = ("26.05", "24.11")
"""The Slurm releases the sandbox can run (sid's, trixie's); the first is the default."""
SLURM_ENV = "GPUCL_SANDBOX_SLURM"


def slurm_version(requested: str | None = None) -> str:
    """The Slurm release to boot: `requested`, else $GPUCL_SANDBOX_SLURM, else the default."""
    version = requested or os.environ.get(SLURM_ENV) or SLURM_VERSIONS[0]
    if version not in SLURM_VERSIONS:
        raise ValueError(
            f"Slurm {version!r} is not one the sandbox carries; use one of "
            + ", ".join(SLURM_VERSIONS)
        )
    return version


# Microsoft package name -> the Debian packages (regexps) whose files it carries.
SMD_PACKAGES: dict[str, tuple[str, ...]] = {
    # SchedMD's slurm-smd carries every plugin, accounting_storage/mysql too (Debian splits it
    # into slurm-wlm-mysql-plugin); slurm-smd-slurmdbd is the daemon alone
    "slurm-smd": (
        r"libslurm\d+(t64)?",
        r"slurm-wlm-basic-plugins",
        r"slurm-wlm-mysql-plugin",
        r"libpmi0",
        r"libpmi2-0",
    ),
    "slurm-smd-client": (r"slurm-client",),
    "slurm-smd-slurmd": (r"slurmd",),
    "slurm-smd-slurmctld": (r"slurmctld",),
    "slurm-smd-slurmdbd": (r"slurmdbd",),
    "slurm-smd-sackd": (r"sackd",),
    "slurm-smd-libpam-slurm-adopt": (r"libpam-slurm-adopt",),
    "slurm-smd-dev": (
        r"libslurm-dev",
        r"slurm-wlm-basic-plugins-dev",
        r"libpmi0-dev",
        r"libpmi2-0-dev",
    ),
}
SLURM_DEB = re.compile(r"^(libslurm|slurm|libpmi0|libpmi2-0|sackd|libpam-slurm-adopt)")
PMIX_VERSION = "4.2.9-2gpucl"
"""Microsoft's `pmix` (config/versions.yaml pmix, pinned "4.2.9-2*"): a stand-in that brings
Debian's PMIx, the one Debian's Slurm is built against (its pmix plugin dlopens that path)."""
NFS_VERSION = "1:2.8.3-1gpucl"
NFS_PACKAGES = {"nfs-common": "", "nfs-kernel-server": "nfs-common"}


def repo_digest() -> str:
    # debs.py builds the stand-in packages: a change there is a change of the repository
    sources = Path(__file__).read_bytes() + Path(__file__).with_name("debs.py").read_bytes()
    h = hashlib.sha256(sources)
    for path in sorted([*STANDINS.rglob("*"), *HPC_IMAGE_FILES.rglob("*")]):
        if path.is_file() or path.is_symlink():
            h.update(str(path.relative_to(STANDINS.parent)).encode())
            h.update(path.read_bytes() if not path.is_symlink() else str(path.readlink()).encode())
    return h.hexdigest()[:12]


def control(deb: Path) -> dict[str, str]:
    """The control fields of a .deb, as an ordered dict (continuation lines kept)."""
    text = subprocess.run(
        ["dpkg-deb", "-f", str(deb)], check=True, capture_output=True, text=True
    ).stdout
    fields: dict[str, str] = {}
    key = ""
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and key:
            fields[key] += "\n" + line
        elif ":" in line:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def ar_members(blob: bytes) -> list[tuple[str, bytes]]:
    """The members of an ar archive (a .deb): [(name, data)] in order."""
    if blob[:8] != b"!<arch>\n":
        raise ValueError("not an ar archive")
    pos, out = 8, []
    while pos + 60 <= len(blob):
        header = blob[pos : pos + 60]
        name = header[:16].decode().rstrip().removesuffix("/")
        size = int(header[48:58])
        pos += 60
        out.append((name, blob[pos : pos + size]))
        pos += size + (size & 1)
    return out


def ar_archive(members: list[tuple[str, bytes]]) -> bytes:
    parts = [b"!<arch>\n"]
    for name, data in members:
        parts.append(f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode())
        parts += [data, b"\n" if len(data) % 2 else b""]
    return b"".join(parts)


def to_zstd(deb: Path, out: Path) -> Path:
    """A copy of the .deb whose data.tar is zstd-compressed (Ubuntu's format since 21.10) instead
    of Debian's xz; control.tar and the files inside are unchanged."""
    members = []
    for name, data in ar_members(deb.read_bytes()):
        if name == "data.tar.xz":
            tar = lzma.decompress(data)
            data = subprocess.run(
                ["zstd", "-q", "-3", "-c"], input=tar, capture_output=True, check=True
            ).stdout
            name = "data.tar.zst"
        members.append((name, data))
    out.write_bytes(ar_archive(members))
    return out


def recompress(debs: list[Path], out_dir: Path) -> list[Path]:
    if shutil.which("zstd") is None:
        raise RuntimeError(
            "the sandbox's package archive needs zstd on the host: apt-get install zstd"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(lambda d: to_zstd(d, out_dir / d.name), debs))


def _deps_without(depends: str, drop: re.Pattern[str]) -> list[str]:
    out = []
    for dep in (d.strip() for d in depends.split(",") if d.strip()):
        name = re.split(r"[\s(:|]", dep, maxsplit=1)[0]
        if not drop.match(name):
            out.append(dep)
    return out


def build_smd(debs: list[Path], out_dir: Path, work: Path) -> list[Path]:
    """Repackage Debian's Slurm .debs as Microsoft-named stand-ins: files, no maintainer scripts."""
    by_name = {control(d)["Package"]: d for d in debs if SLURM_DEB.match(d.name)}
    debian_version = control(by_name["slurmd"])["Version"]
    version = SMD_VERSION.format(debian=debian_version.replace("~", "."))
    built = []
    for smd, patterns in SMD_PACKAGES.items():
        members = [n for n in by_name if any(re.fullmatch(p, n) for p in patterns)]
        tree = work / smd
        tree.mkdir(parents=True)
        depends: list[str] = [] if smd == "slurm-smd" else [f"slurm-smd (= {version})"]
        for name in members:
            subprocess.run(["dpkg-deb", "-x", str(by_name[name]), str(tree)], check=True)
            for dep in _deps_without(control(by_name[name]).get("Depends", ""), SLURM_DEB):
                if dep not in depends and "sysusers" not in dep:
                    depends.append(dep)
        _microsoftify(tree)
        _overlay(STANDINS / smd, tree)
        fields = {
            "Package": smd,
            "Version": version,
            "Architecture": ARCH,
            "Maintainer": "gpu-clusters sandbox <sandbox@localhost>",
            "Depends": ", ".join(depends),
            "Description": f"gpucl sandbox stand-in for Microsoft's {smd} (Debian Slurm "
            f"{debian_version} files: {', '.join(sorted(members))})",
        }
        if not depends:
            del fields["Depends"]
        built.append(build_deb(tree, fields, out_dir))
    return built


def _microsoftify(tree: Path) -> None:
    """Make a Debian Slurm tree look like SchedMD's: plain daemon names (Debian installs
    slurmd-wlm and points /usr/sbin/slurmd at it from its postinst), no sysusers.d entry (it would
    create `slurm`), upstream's unit files (files/standins) for Debian's units and sysv scripts."""
    for wlm in tree.glob("usr/sbin/*-wlm"):
        wlm.rename(wlm.with_name(wlm.name.removesuffix("-wlm")))
    for pattern in (
        "usr/lib/sysusers.d/*",
        "usr/lib/tmpfiles.d/*",
        "etc/init.d/*",
        "usr/lib/systemd/system/*",
    ):
        for path in tree.glob(pattern):
            path.unlink()


def build_nfs(out_dir: Path, work: Path) -> list[Path]:
    built = []
    for name, depends in NFS_PACKAGES.items():
        tree = work / name
        _overlay(STANDINS / name, tree)
        fields = {
            "Package": name,
            "Version": NFS_VERSION,
            "Architecture": ARCH,
            "Maintainer": "gpu-clusters sandbox <sandbox@localhost>",
            "Depends": depends,
            "Description": f"gpucl sandbox stand-in for {name} (no NFS here: bind mounts)",
        }
        if not depends:
            del fields["Depends"]
        built.append(build_deb(tree, fields, out_dir))
    return built


def build_pmix(out_dir: Path, work: Path) -> Path:
    tree = work / "pmix"
    tree.mkdir(parents=True)
    fields = {
        "Package": "pmix",
        "Version": PMIX_VERSION,
        "Architecture": ARCH,
        "Maintainer": "gpu-clusters sandbox <sandbox@localhost>",
        "Depends": "libpmix2t64",
        "Description": "gpucl sandbox stand-in for Microsoft's pmix (Debian's libpmix2t64, "
        "which Debian's Slurm is built against)",
    }
    return build_deb(tree, fields, out_dir)


def _overlay(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
    else:
        dst.mkdir(parents=True, exist_ok=True)


def write_index(archive: Path, suite: str, debs: list[Path]) -> None:
    """pool/ + dists/<suite>/main/binary-amd64/Packages(.gz) + Release for the given .debs."""
    pool = archive / "pool"
    pool.mkdir(parents=True, exist_ok=True)
    stanzas = []
    for deb in sorted(debs):
        target = pool / deb.name
        if not target.exists():
            shutil.copy2(deb, target)
        data = target.read_bytes()
        fields = control(target)
        fields.update(
            {
                "Filename": f"pool/{deb.name}",
                "Size": str(len(data)),
                "MD5sum": hashlib.md5(data).hexdigest(),
                "SHA256": hashlib.sha256(data).hexdigest(),
            }
        )
        stanzas.append("".join(f"{k}: {v}\n" for k, v in fields.items()))
    binary = archive / "dists" / suite / "main" / f"binary-{ARCH}"
    binary.mkdir(parents=True, exist_ok=True)
    packages = "\n".join(stanzas).encode()
    (binary / "Packages").write_bytes(packages)
    (binary / "Packages.gz").write_bytes(gzip.compress(packages, mtime=0))
    lines = [
        f"Origin: gpucl-sandbox\nLabel: gpucl-sandbox\nSuite: {suite}\nCodename: {suite}\n"
        f"Date: {email.utils.formatdate(usegmt=True)}\n"
        f"Architectures: {ARCH}\nComponents: main\nSHA256:\n"
    ]
    for rel in (f"main/binary-{ARCH}/Packages", f"main/binary-{ARCH}/Packages.gz"):
        blob = (archive / "dists" / suite / rel).read_bytes()
        lines.append(f" {hashlib.sha256(blob).hexdigest()} {len(blob)} {rel}\n")
    (archive / "dists" / suite / "Release").write_text("".join(lines))


def sign(archive: Path, suite: str, gnupg: Path) -> None:
    release = archive / "dists" / suite / "Release"
    subprocess.run(
        [
            "gpg",
            "--homedir",
            str(gnupg),
            "--batch",
            "--yes",
            "--clearsign",
            "-o",
            str(release.with_name("InRelease")),
            str(release),
        ],
        check=True,
        capture_output=True,
    )


def make_key(gnupg: Path, out: Path) -> None:
    """A throwaway signing key; its public half goes to out/gpucl-sandbox.{gpg,asc}."""
    gnupg.mkdir(mode=0o700, parents=True, exist_ok=True)
    gpg = ["gpg", "--homedir", str(gnupg), "--batch", "--yes"]
    subprocess.run(
        [
            *gpg,
            "--passphrase",
            "",
            "--quick-gen-key",
            "gpucl sandbox repository",
            "ed25519",
            "sign",
            "never",
        ],
        check=True,
        capture_output=True,
    )
    asc = subprocess.run([*gpg, "--armor", "--export"], check=True, capture_output=True).stdout
    (out / "gpucl-sandbox.asc").write_bytes(asc)
    binary = subprocess.run([*gpg, "--export"], check=True, capture_output=True).stdout
    (out / "gpucl-sandbox.gpg").write_bytes(binary)


_DPKG_OPS = {">=": "ge", "<=": "le", "=": "eq", ">>": "gt", "<<": "lt"}


def _satisfied(version: str | None, constraint: str) -> bool:
    """Whether `version` meets a Depends constraint such as ">= 2.15.0" ("" for none)."""
    if version is None:
        return False
    if not constraint:
        return True
    op, _, wanted = constraint.partition(" ")
    argv = ["dpkg", "--compare-versions", version, _DPKG_OPS[op], wanted]
    return subprocess.run(argv, capture_output=True).returncode == 0


def sid_libraries(slurm: list[Path], candidates: list[Path], have: dict[str, str]) -> list[Path]:
    """The non-Slurm .debs among `candidates` (sid's) that `slurm` needs, directly or through
    each other, because `have` (trixie's: name -> version) lacks them or has them too old."""
    fields = {d: control(d) for d in candidates if not SLURM_DEB.match(d.name)}
    by_name = {f["Package"]: d for d, f in fields.items()}
    source = {f["Package"]: f.get("Source", f["Package"]).split(" ")[0] for f in fields.values()}
    chosen: dict[str, Path] = {}
    todo = list(slurm)

    def choose(name: str) -> None:
        # a library's siblings from the same source pin each other's version (libhwloc-plugins
        # depends on libhwloc15 (<< next)): trixie's sibling would refuse sid's library
        for sibling in [n for n in by_name if source[n] == source[name]] or [name]:
            if sibling not in chosen and (sibling == name or sibling in have):
                chosen[sibling] = by_name[sibling]
                todo.append(by_name[sibling])

    while todo:
        depends = control(todo.pop()).get("Depends", "")
        for dep in _deps_without(depends, SLURM_DEB):
            alternatives = []
            for alt in dep.split("|"):
                m = re.match(r"\s*([^\s(:]+)(?::\S+)?\s*(?:\(([^)]*)\))?", alt)
                if m:
                    alternatives.append((m.group(1), (m.group(2) or "").strip()))
            if any(_satisfied(have.get(n), c) for n, c in alternatives):
                continue
            for name, constraint in alternatives:
                deb = by_name.get(name)
                if (
                    deb is not None
                    and name not in chosen
                    and _satisfied(fields[deb]["Version"], constraint)
                ):
                    choose(name)
                    break
    return sorted(chosen.values())


def dpkg_status(rootfs: Path) -> dict[str, str]:
    """name -> version of what is installed in a root filesystem."""
    out, name = {}, ""
    for line in (rootfs / "var/lib/dpkg/status").read_text().splitlines():
        if line.startswith("Package: "):
            name = line.split(": ", 1)[1]
        elif line.startswith("Version: ") and name:
            out[name] = line.split(": ", 1)[1]
    return out


def build_repo(
    debs_dir: Path,
    repo_dir: Path,
    log=print,
    *,
    sid_debs: Path | None = None,
    installed: dict[str, str] | None = None,
) -> Path:
    """Build (once per repo digest) the two signed archives under repo_dir; return repo_dir.
    With `sid_debs`, its Slurm replaces trixie's, with only the sid libraries it needs that
    trixie's .debs (and `installed`, the image's packages) lack or have too old."""
    if (repo_dir / "READY").exists():
        return repo_dir
    shutil.rmtree(repo_dir, ignore_errors=True)
    repo_dir.mkdir(parents=True)
    debs = sorted(debs_dir.glob("*.deb"))
    slurm = [d for d in debs if SLURM_DEB.match(d.name)]
    extra: list[Path] = []
    if sid_debs is not None:
        sid = sorted(sid_debs.glob("*.deb"))
        slurm = [d for d in sid if SLURM_DEB.match(d.name)]
        have = dict(installed or {})
        have |= {c["Package"]: c["Version"] for c in map(control, debs)}
        extra = sid_libraries(slurm, sid, have)
        log(f"repo: sid's Slurm needs from sid: {', '.join(d.name for d in extra) or 'nothing'}")
    with tempfile.TemporaryDirectory() as tmp:
        work, built = Path(tmp), Path(tmp) / "built"
        built.mkdir()
        log(f"repo: repackaging Debian Slurm as slurm-smd stand-ins ({len(slurm)} .debs)")
        smd = build_smd(slurm, built, work / "smd")
        nfs = build_nfs(built, work / "nfs")
        pmix = build_pmix(built, work / "pmix")
        # a short home: gpg-agent's socket path must fit 108 bytes; the key is thrown away
        gnupg = work / "gnupg"
        make_key(gnupg, repo_dir)
        log("repo: recompressing the .debs with zstd, as Ubuntu's archive has them")
        plain = recompress([d for d in debs if not SLURM_DEB.match(d.name)], work / "zstd")
        libs = recompress(extra, work / "zstd-sid")
        debian = plain + nfs
        write_index(repo_dir / "debian", "sandbox", debian)
        ms = repo_dir / "microsoft" / "repos" / "slurm-ubuntu-jammy"
        write_index(ms, "stable", [*smd, pmix, *libs])
        sign(repo_dir / "debian", "sandbox", gnupg)
        sign(ms, "stable", gnupg)
        subprocess.run(["gpgconf", "--homedir", str(gnupg), "--kill", "gpg-agent"], check=False)
        # The image's entry for the same archive (see the image's gpucl-sandbox.sources).
        (repo_dir / "hpc-image").mkdir()
        (repo_dir / "hpc-image" / "microsoft").symlink_to("../microsoft")
    (repo_dir / "READY").write_text("ok\n")
    log(f"repo: {len(debian)} packages in debian/, {len(smd)} slurm-smd stand-ins in microsoft/")
    return repo_dir


def prepare(image, log=print, slurm: str | None = None) -> Path:
    """The repository for this image and Slurm release (built once per repo digest); its key
    goes into the image. The github.com stand-in (github.py) is built beside it; its CA is
    trusted by the image."""
    from . import github

    slurm = slurm_version(slurm)
    digest = repo_digest()
    repo_dir = image.dir / f"repo-{digest}-slurm{slurm}"
    mounts = Path("/proc/self/mountinfo").read_text()
    for stale in image.dir.glob("repo-*"):
        if not stale.name.startswith(f"repo-{digest}-") and str(stale) not in mounts:
            shutil.rmtree(stale)
    sid = image.sid_debs if slurm == SLURM_VERSIONS[0] else None
    installed = dpkg_status(image.rootfs) if sid else None
    build_repo(image.debs, repo_dir, log=log, sid_debs=sid, installed=installed)
    # The image trusts every release's repository key (a keyring is a concatenation of keys): a
    # sandbox of the other release may be running on this image, its nodes reading this file.
    keys = b"".join(
        (r / "gpucl-sandbox.gpg").read_bytes()
        for r in sorted(image.dir.glob(f"repo-{digest}-slurm*"))
        if (r / "READY").exists()
    )
    _write_if_changed(image.rootfs / "usr" / "share" / "keyrings" / "gpucl-sandbox.gpg", keys)
    pins = github.Pins.from_catalog()
    gh = repo_dir / f"github-{github.digest(pins)}"
    if not (gh / "READY").exists():
        for stale in repo_dir.glob("github-*"):
            shutil.rmtree(stale)
        log("repo: building the github.com stand-ins (enroot .debs, pyxis and NHC repositories)")
        github.build(gh, pins)
        (gh / "READY").write_text("ok\n")
    from . import pypi

    wheels = pypi.pins_from_catalog()
    py = repo_dir / f"pypi-{pypi.digest(wheels)}"
    if not (py / "READY").exists():
        for stale in repo_dir.glob("pypi-*"):
            shutil.rmtree(stale)
        log(f"repo: downloading the wheels pip will install ({', '.join(wheels) or 'none'})")
        pypi.build(py, wheels)
        (py / "READY").write_text("ok\n")
    served = repo_dir / "pypi"
    if not served.is_symlink() or os.readlink(served) != py.name:
        tmp_link = served.with_name("pypi.new")
        tmp_link.unlink(missing_ok=True)
        tmp_link.symlink_to(py.name)
        tmp_link.rename(served)  # a running sandbox's lab server serves it: never absent
    _write_if_changed(image.rootfs / "etc" / "pip.conf", pypi.PIP_CONF.encode())
    ca = image.rootfs / "usr" / "local" / "share" / "ca-certificates" / "gpucl-sandbox-ca.crt"
    if not ca.exists() or ca.read_bytes() != (gh / "tls" / "ca.crt").read_bytes():
        ca.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(gh / "tls" / "ca.crt", ca)
        subprocess.run(
            ["chroot", str(image.rootfs), "update-ca-certificates"], check=True, capture_output=True
        )
    return repo_dir


def _write_if_changed(path: Path, data: bytes) -> None:
    """Replace a file of the image (running nodes may read it) only when it changes, whole."""
    if path.exists() and path.read_bytes() == data:
        return
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    tmp.rename(path)


def github_dir(repo_dir: Path) -> Path:
    """The github.com stand-in built by prepare() for this repository."""
    return next(p for p in sorted(repo_dir.glob("github-*")) if (p / "READY").exists())


# What the Azure HPC image (the GPU nodes' image) ships on top of a plain Ubuntu that the node
# scripts rely on; the scheduler's plain Ubuntu image does not have them (its user-data installs
# build-essential itself). Azure/azhpc-images ubuntu/common/install_utils.sh installs these three
# (with many more the scripts do not use): enroot's jq and autoconf's m4 are there before boot.
HPC_IMAGE_PACKAGES = ("build-essential", "jq", "m4")
# Not the HPC image's: the PyTorch that `validate --train` runs, standing in for the NVIDIA
# PyTorch container pyxis starts on the cloud (substitutions.py, "pytorch-container").
TRAIN_PACKAGES = ("python3-torch",)
TORCH_DISTRIBUTED = "usr/lib/python3/dist-packages/torch/distributed/__init__.py"
# Appended to it in the layer: Debian builds PyTorch without libuv, which TCPStore asks for by
# default, and torchrun's rendezvous stores (c10d, static) cannot ask for the other backend.
# Declared with the substitution; the store's protocol and the rendezvous are PyTorch's own.
TORCH_NO_LIBUV = """

# gpucl sandbox (clusterctl/sandbox/vm/repo.py): this PyTorch is built without libuv.
if is_available():
    _GpuclTCPStore = TCPStore

    class TCPStore(_GpuclTCPStore):  # type: ignore[no-redef]
        def __init__(self, *args, **kwargs):
            kwargs["use_libuv"] = False
            super().__init__(*args, **kwargs)

    for _m in list(sys.modules.values()):
        if (getattr(_m, "__name__", "") or "").startswith("torch.distributed") and getattr(
            _m, "TCPStore", None
        ) is _GpuclTCPStore:
            _m.TCPStore = TCPStore
"""


def _layer_digest() -> str:
    h = hashlib.sha256("\0".join([*HPC_IMAGE_PACKAGES, *TRAIN_PACKAGES, TORCH_NO_LIBUV]).encode())
    for path in sorted(HPC_IMAGE_FILES.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(HPC_IMAGE_FILES)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def hpc_layer(image, repo_dir: Path, log=print) -> Path:
    """An overlay layer over the image with what the HPC image adds (GPU nodes boot on it),
    installed once with apt from the stand-in archive; returns the layer's directory."""
    # The HPC image is one whatever Slurm boots on it: the layer is the image's, built from the
    # debian/ archive, which is trixie's for either Slurm release.
    layer = image.dir / f"hpc-layer-{_layer_digest()}"
    if (layer / "READY").exists():
        return layer / "upper"
    mounts = Path("/proc/self/mountinfo").read_text()
    for stale in image.dir.glob("hpc-layer*"):
        if str(stale) not in mounts:
            shutil.rmtree(stale, ignore_errors=True)
    for sub in ("upper", "work", "root"):
        (layer / sub).mkdir(parents=True)
    root = layer / "root"
    log(f"repo: HPC image layer ({', '.join(HPC_IMAGE_PACKAGES + TRAIN_PACKAGES)})")
    opts = f"lowerdir={image.rootfs},upperdir={layer / 'upper'},workdir={layer / 'work'}"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(root)], check=True)
    archive = root / "mnt" / "gpucl-archive"
    try:
        archive.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "--bind", str(repo_dir / "debian"), str(archive)], check=True)
        try:
            lst = root / "etc" / "apt" / "sources.list.d" / "gpucl-layer.list"
            lst.write_text("deb [trusted=yes] file:/mnt/gpucl-archive sandbox main\n")
            env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"}
            apt = ["chroot", str(root), "apt-get", "-o", "Dir::Etc::SourceParts=-"]
            apt += ["-o", "Dir::Etc::SourceList=/etc/apt/sources.list.d/gpucl-layer.list"]
            subprocess.run([*apt, "update", "-q"], env=env, check=True, capture_output=True)
            proc = subprocess.run(
                [*apt, "install", "-y", "-q", *HPC_IMAGE_PACKAGES, *TRAIN_PACKAGES],
                env=env,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                tail = proc.stdout[-2000:]
                raise RuntimeError(f"HPC image layer: apt-get install failed:\n{tail}")
            lst.unlink()
            with open(root / TORCH_DISTRIBUTED, "a") as f:
                f.write(TORCH_NO_LIBUV)
            _overlay(HPC_IMAGE_FILES, root)
            subprocess.run(["chroot", str(root), "apt-get", "clean"], check=True)
            shutil.rmtree(root / "var" / "lib" / "apt" / "lists", ignore_errors=True)
            (root / "var" / "lib" / "apt" / "lists" / "partial").mkdir(parents=True)
        finally:
            subprocess.run(["umount", str(archive)], check=True)
        archive.rmdir()
    finally:
        subprocess.run(["umount", str(root)], check=True)
    shutil.rmtree(layer / "work")
    (layer / "READY").write_text("ok\n")
    return layer / "upper"
