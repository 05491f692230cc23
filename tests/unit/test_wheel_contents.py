"""The wheel `pip install .` builds is the product alone: no module of the sandbox and none of its
stand-in files (the fake nvidia-smi, dcgmi and docker, the vendored pyxis tarball ...). Installed
from it, the sandbox's commands say in one line where the sandbox is (exit 2, no traceback); the
README's first command, an editable install, still imports the sandbox from the checkout.

The wheels are built in-process by the build backend (hatchling), as `pip wheel .` would: well
under a second each, no network."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "clusterctl" / "sandbox"


def build(kind: str, into: Path) -> Path:
    from hatchling.builders.wheel import WheelBuilder

    (path,) = WheelBuilder(str(ROOT)).build(directory=str(into), versions=[kind])
    return Path(path)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build("standard", tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel's files as pip would lay them in site-packages."""
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    # never run a sandbox command for real: without this the commands below would reach one
    assert not (site / "clusterctl" / "sandbox").exists(), "the wheel carries the sandbox"
    return site


def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return z.namelist()


def test_the_wheel_holds_the_product_and_no_module_of_the_sandbox(wheel: Path) -> None:
    files = names(wheel)
    assert {"clusterctl/cli/sandbox.py", "clusterctl/host_tools.py"} <= set(files)
    assert any(f.startswith("clusterctl/_data/templates/") for f in files)
    assert [f for f in files if f.startswith("clusterctl/sandbox/")] == []


def test_the_wheel_holds_no_stand_in_program_nor_vendored_source(wheel: Path) -> None:
    files = SANDBOX / "vm" / "files"
    # what the sandbox puts on its nodes in place of the real thing: programs and tarballs
    standins = {
        p.name
        for p in files.rglob("*")
        if p.is_file() and (os.access(p, os.X_OK) or p.name.endswith((".tar.gz", ".deb")))
    }
    assert {"nvidia-smi", "dcgmi", "docker"} <= standins, sorted(standins)
    assert any(n.endswith(".tar.gz") for n in standins), sorted(standins)
    shipped = [f for f in names(wheel) if f.rsplit("/", 1)[-1] in standins]
    assert shipped == []


def run_installed(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`clusterctl ARGS` from the installed wheel: its folder first on sys.path, run from
    elsewhere, so neither the checkout nor the editable install's path is what imports."""
    env = {**os.environ, "PYTHONPATH": str(site), "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-m", "clusterctl", *args],
        cwd=site.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_installed_wheel_imports_its_own_clusterctl(installed: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(installed)}
    where = subprocess.run(
        [sys.executable, "-c", "import clusterctl; print(clusterctl.__file__)"],
        cwd=installed.parent,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(installed), where
    assert run_installed(installed, "--help").returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        ["sandbox", "status"],
        ["sandbox", "up", "--help"],
        ["sandbox", "vm", "down"],
        ["validate", "--nccl", "--sandbox"],
    ],
    ids=" ".join,
)
def test_sandbox_commands_from_the_wheel_say_where_the_sandbox_is(
    installed: Path, args: list[str]
) -> None:
    proc = run_installed(installed, *args)
    said = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 2, said
    assert "Traceback" not in said and len(said.splitlines()) == 1, said
    assert "ships with the source checkout" in said, said
    assert 'pip install -e ".[dev]"' in said, said


def test_doctor_from_the_wheel_says_the_sandbox_is_not_installed(installed: Path) -> None:
    proc = run_installed(installed, "doctor", "--path", "sandbox")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "sandbox     lacks clusterctl.sandbox" in proc.stdout
    assert "ships with the source checkout, not the installed package: in a clone" in proc.stdout
    assert 'pip install -e ".[dev]"' in proc.stdout


def test_the_editable_install_puts_the_checkout_and_its_sandbox_on_the_path(
    tmp_path: Path,
) -> None:
    """The README's first command (`pip install -e ".[dev]"`) builds this editable wheel: a .pth
    file naming the checkout, from which clusterctl.sandbox imports as before."""
    with zipfile.ZipFile(build("editable", tmp_path)) as z:
        pth = [z.read(n).decode() for n in z.namelist() if n.endswith(".pth")]
    paths = [Path(line) for text in pth for line in text.splitlines() if line.strip()]
    assert [p for p in paths if (p / "clusterctl" / "sandbox" / "vm" / "boot.py").is_file()], pth
