"""The node image: an mmdebstrap'ed Debian trixie root filesystem, cached by the hash of its recipe.

The image stands in for Azure's HPC image (microsoft-dsvm:ubuntu-hpc): systemd, cloud-init, python3,
curl, openssh, iproute2 and the GPU stand-ins are preinstalled; Slurm and munge are NOT (the
user-data installs them). The .debs the user-data will install are downloaded once, at build time,
next to the root filesystem, so booting needs no network.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

CACHE_ROOT = Path("/var/cache/gpu-clusters/sandbox-image")
LOCK_WAIT_S = 1800.0
"""How long a sandbox waits for another to finish preparing the cache (a first image build
takes 1-4 minutes, a repository build 1-2)."""
FILES = Path(__file__).parent / "files"

# What Azure's HPC image ships that the node scripts use (or a Debian stand-in for it).
IMAGE_PACKAGES = (
    "systemd",
    "systemd-sysv",
    "dbus",
    "cloud-init",
    "python3",
    "curl",
    "ca-certificates",
    "openssh-server",
    "iproute2",
    "iputils-ping",
    "kmod",
    "procps",
    "rsync",
    "git",
    "make",
    "gpg",
    "xfsprogs",  # Ubuntu's cloud images ship it; the scheduler's fs_setup needs it before packages
    "e2fsprogs",  # so do they (mkfs.ext4): cloud-init formats Azure's resource disk ext4 at boot
    "netbase",
    "less",
    "systemd-resolved",
    "sudo",
    "logrotate",  # Ubuntu's images ship it (the user-data's /etc/logrotate.d files need it)
    "udev",  # every Ubuntu image has it (the GPU nodes' mdadm would pull it in at boot otherwise)
)
# Downloaded (with their dependencies) into the local repository; installed only by the user-data.
# Debian's Slurm binaries are repackaged as the slurm-smd* stand-ins (see repo.py).
REPO_PACKAGES = (
    "munge",
    "mdadm",
    "xfsprogs",
    "mariadb-server",
    "build-essential",  # the scheduler builds pyxis against its Slurm headers
    "slurmd",
    "slurmdbd",
    "slurmctld",
    "slurm-client",
    "libslurm-dev",
    "slurm-wlm-basic-plugins-dev",
    "sackd",  # the login node's configless client (slurm-smd-sackd)
    "libpam-slurm-adopt",  # GPU nodes: ssh only into one's own job (slurm-smd-libpam-slurm-adopt)
    "libpmix2t64",  # srun --mpi=pmix where srun runs (the HPC image has pmix; see repo.py)
    # enroot's .deb dependencies (the user-data installs it from GitHub; apt resolves these) and
    # NHC's build (autogen.sh needs autoconf and automake).
    "jq",
    "parallel",
    "squashfs-tools",
    "zstd",
    "bsdmainutils",
    "libcap2-bin",
    "autoconf",
    "automake",
    "python3-venv",  # the scheduler's power program venv
    "iptables",  # the scheduler's IMDS guard (Ubuntu images ship it; the user-data names it)
    "python3-torch",  # validate --train's stand-in for the NVIDIA PyTorch container (GPU nodes)
    "prometheus",  # the scheduler's metrics store and alert rules (monitoring)
    "prometheus-node-exporter",  # every node's exporter, with the scheduler's Slurm metrics file
)


# Azure's nodes run slurm-smd 25.11.5 (config/versions.yaml), which Debian does not carry; the
# sandbox runs the releases on either side of it: trixie's 24.11 and sid's 26.05 (the default).
# sid's Slurm is downloaded by name from sid with what it needs that trixie lacks (libhwloc15 2.15,
# libllhttp9.4: slurmd 26.05.5's Depends), into debs-sid/; everything else stays trixie's.
SID_SLURM_PACKAGES = (
    "slurmd",
    "slurmctld",
    "slurmdbd",
    "slurm-client",
    "sackd",
    "libpam-slurm-adopt",
    "libslurm-dev",
    "slurm-wlm-basic-plugins-dev",
    "slurm-wlm-mysql-plugin",
    # not Slurm's: trixie's libhwloc-plugins pins libhwloc15 (< 2.12.0A), so the sid libhwloc15
    # that sid's slurmd needs brings its own plugins (repo.sid_libraries takes same-source siblings)
    "libhwloc-plugins",
)


@dataclass(frozen=True)
class Recipe:
    suite: str = "trixie"
    mirror: str = "http://deb.debian.org/debian"
    packages: tuple[str, ...] = IMAGE_PACKAGES
    repo_packages: tuple[str, ...] = REPO_PACKAGES
    sid_packages: tuple[str, ...] = SID_SLURM_PACKAGES

    def digest(self) -> str:
        """Hash of everything that shapes the image: recipe, mmdebstrap command, files."""
        h = hashlib.sha256(json.dumps(self.__dict__, sort_keys=True, default=list).encode())
        argv = "\0".join(mmdebstrap_argv(self, Path("ROOTFS"), Path("DEBS")))
        h.update(argv.replace(str(FILES), "FILES").encode())  # not where the checkout lives
        for path in sorted((FILES / "rootfs").rglob("*")):
            if path.is_file():
                h.update(
                    str(path.relative_to(FILES / "rootfs")).encode() + b"\0" + path.read_bytes()
                )
        return h.hexdigest()[:16]


@dataclass(frozen=True)
class Image:
    dir: Path

    @property
    def rootfs(self) -> Path:
        return self.dir / "rootfs"

    @property
    def debs(self) -> Path:
        return self.dir / "debs"

    @property
    def sid_debs(self) -> Path:
        """sid's Slurm .debs and the sid libraries they need (not in debs/)."""
        return self.dir / "debs-sid"

    @property
    def ready(self) -> bool:
        return (self.dir / "READY").exists()


def image_for(recipe: Recipe = Recipe(), cache_root: Path = CACHE_ROOT) -> Image:
    return Image(cache_root / recipe.digest())


def mmdebstrap_argv(recipe: Recipe, rootfs: Path, debs: Path) -> list[str]:
    """The mmdebstrap command line: base system, then the repo .debs downloaded into `debs`, then
    sid's Slurm into `debs`-sid (only the files trixie's download did not bring)."""
    download = " ".join(recipe.repo_packages)
    sid = " ".join(f"{p}/sid" for p in recipe.sid_packages)
    sid_list = "/etc/apt/sources.list.d/gpucl-sid.list"
    sid_hook = (
        # sid's Release is only valid for a week: a mirror snapshot of it has "expired"
        f'echo "deb [check-valid-until=no] {recipe.mirror} sid main" > "$1"{sid_list} && '
        'chroot "$1" apt-get clean && chroot "$1" apt-get update -q && '
        f'chroot "$1" apt-get install --download-only -y -q {sid} && '
        f"mkdir -p {debs}-sid && "
        'for f in "$1"/var/cache/apt/archives/*.deb; do '
        f'[ -e {debs}/"$(basename "$f")" ] || cp "$f" {debs}-sid/; done && '
        f'rm -f "$1"{sid_list} && chroot "$1" apt-get clean && chroot "$1" apt-get update -q'
    )
    return [
        "mmdebstrap",
        "--mode=root",
        "--variant=apt",
        "--verbose",
        "--include=" + ",".join(recipe.packages),
        '--aptopt=Acquire::Retries "3"',
        "--customize-hook=" + f'chroot "$1" apt-get install --download-only -y -q {download}',
        "--customize-hook=" + f'cp "$1"/var/cache/apt/archives/*.deb {debs}/',
        "--customize-hook=" + sid_hook,
        "--customize-hook=" + f'tar -C {FILES}/rootfs -cf - . | tar -C "$1" --no-same-owner -xf -',
        "--customize-hook="
        + 'chroot "$1" systemctl enable gpucl-sandbox-platform.service systemd-networkd',
        "--customize-hook=" + 'rm -f "$1"/etc/apt/sources.list',
        recipe.suite,
        str(rootfs),
        recipe.mirror,
    ]


@contextlib.contextmanager
def cache_lock(cache_root: Path = CACHE_ROOT, log=print, wait_s: float = LOCK_WAIT_S):
    """Held while a sandbox builds or reads the image, its repositories and its layer: two
    sandboxes (two users, or two test workers) share the cache and never see it half made."""
    cache_root.parent.mkdir(parents=True, exist_ok=True)
    with open(cache_root.with_name(cache_root.name + ".lock"), "a+") as f:
        deadline, told = time.monotonic() + wait_s, False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"{f.name}: another sandbox held it for {wait_s:.0f} s; "
                        "if none is being prepared, that process is stuck: stop it"
                    ) from None
                if not told:
                    log(f"image: waiting for another sandbox to finish preparing {cache_root}")
                    told = True
                time.sleep(1)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build(recipe: Recipe = Recipe(), cache_root: Path = CACHE_ROOT, log=print) -> Image:
    """Build the image unless a finished one with this recipe's hash is cached; return it."""
    img = image_for(recipe, cache_root)
    if img.ready:
        log(f"image: cached {img.dir}")
        return img
    mounts = Path("/proc/self/mountinfo").read_text()
    for stale in cache_root.glob("*"):  # an old recipe's image is never used again, unless booted
        if str(stale) not in mounts:
            shutil.rmtree(stale)
    tmp = img.dir.with_name(img.dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "debs").mkdir(parents=True)
    t0 = time.monotonic()
    log(f"image: building Debian {recipe.suite} into {img.dir} (mmdebstrap, about 1-3 min)")
    argv = mmdebstrap_argv(recipe, tmp / "rootfs", tmp / "debs")
    _run_with_progress(argv, tmp / "mmdebstrap.log", log)
    (tmp / "recipe.json").write_text(json.dumps(recipe.__dict__, indent=1, default=list))
    tmp.rename(img.dir)
    (img.dir / "READY").write_text(f"{time.monotonic() - t0:.1f}\n")
    log(f"image: ready in {time.monotonic() - t0:.0f} s")
    return img


def _run_with_progress(argv: list[str], logfile: Path, log) -> None:
    """Run mmdebstrap, keep its full log, print its stage lines ("I: ...") as progress."""
    with open(logfile, "w") as out:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout
        for line in proc.stdout:
            out.write(line)
            if line.startswith("I: ") and "running" not in line:
                log("image:   " + line[3:].rstrip()[:100])
        if proc.wait() != 0:
            tail = logfile.read_text().splitlines()[-15:]
            raise RuntimeError(f"mmdebstrap failed (log {logfile}):\n" + "\n".join(tail))


def main() -> int:
    img = build()
    print(img.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
