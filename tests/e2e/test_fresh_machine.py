"""The README's first command on a fresh Debian 12 and 13: its install line, run as written in a
clean root filesystem of each (mmdebstrap minbase plus python3, the README's one precondition;
cached), leaves every host tool the sandbox runs in place and `python3 -m venv` working.

Before: on Debian the line lacked python3-venv (`python3 -m venv` fails without it: no ensurepip),
and a cloud image's empty apt lists made `apt-get install` fail before anything was installed; CI
never saw either because its own apt line differs. Root only (chroot, mounts); needs
deb.debian.org, as the README's line does."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.vm.conftest import need_sandbox

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path("/var/cache/gpu-clusters/fresh-debian")
MIRROR = "http://deb.debian.org/debian"


def readme_install_line() -> str:
    """The README's first command up to its first `python3`: the install part, as written."""
    block = re.search(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)
    assert block, "README: no bash block"
    first = block.group(1).split(" && python3 ")[0]
    assert first.startswith("sudo apt-get "), first
    return first.replace("sudo ", "")


def _fresh_rootfs(suite: str) -> Path:
    base = CACHE / suite
    if not (base / "READY").exists():
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        subprocess.run(
            ["mmdebstrap", "--mode=root", "--variant=minbase", "--include=python3", "-q",
             suite, str(base / "rootfs"), MIRROR],
            check=True, capture_output=True, timeout=900,
        )  # fmt: skip
        (base / "READY").touch()
    return base / "rootfs"


@pytest.mark.parametrize("suite", ["bookworm", "trixie"])
def test_the_readme_install_line_readies_a_fresh_debian(suite: str, tmp_path: Path) -> None:
    need_sandbox()
    lower = _fresh_rootfs(suite)
    upper, work, root = tmp_path / "upper", tmp_path / "work", tmp_path / "root"
    for d in (upper, work, root):
        d.mkdir()
    archives = CACHE / f"{suite}-archives"  # downloaded .debs kept between runs
    (archives / "partial").mkdir(parents=True, exist_ok=True)
    mounts = [
        ["-t", "overlay", "overlay", "-o", f"lowerdir={lower},upperdir={upper},workdir={work}",
         str(root)],
        ["-t", "proc", "proc", str(root / "proc")],
        ["--bind", "/dev", str(root / "dev")],
        ["--bind", str(archives), str(root / "var/cache/apt/archives")],
        ["--bind", str(ROOT), str(root / "mnt")],
    ]  # fmt: skip
    done: list[Path] = []
    try:
        for argv in mounts:
            subprocess.run(["mount", *argv], check=True)
            done.append(Path(argv[-1]))
        shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
        (root / "etc/apt/apt.conf.d/90gpucl-keep").write_text(
            'Binary::apt::APT::Keep-Downloaded-Packages "true";\n'
        )

        def sh(script: str, timeout: int = 900) -> subprocess.CompletedProcess:
            env = [
                "env",
                "-i",
                "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                "DEBIAN_FRONTEND=noninteractive",
            ]
            return subprocess.run(["chroot", str(root), *env, "sh", "-c", script],
                                  capture_output=True, text=True, timeout=timeout)  # fmt: skip

        installed = sh(readme_install_line())
        assert installed.returncode == 0, installed.stderr[-2000:]
        venv = sh("python3 -m venv /tmp/venv && /tmp/venv/bin/python -m pip --version")
        assert venv.returncode == 0, venv.stdout[-1000:] + venv.stderr[-1000:]
        tools = sh(
            "cd /mnt && python3 -c 'from clusterctl.host_tools import missing; "
            'print(" ".join(t.name for t in missing()))\''
        )
        assert tools.returncode == 0, tools.stderr
        assert tools.stdout.strip() == "", f"{suite}: the README's line leaves out {tools.stdout}"
        browser = sh("command -v chromium")  # the tests open the acceptance report in it
        assert browser.returncode == 0, f"{suite}: the README's line leaves out chromium"
    finally:
        for path in reversed(done):
            subprocess.run(["umount", "-l", str(path)], check=False)
