"""The PyPI stand-in: the wheels the user-data's `pip install` pins need, downloaded once by the
host (which reaches PyPI), served by the lab server as a PEP 503 simple index at
http://sandbox-mirror/pypi/simple/. The image's /etc/pip.conf points pip there (declared with
the package sources); the pins and pip's resolver are the cloud's.
"""

from __future__ import annotations

import hashlib
import html
import re
import subprocess
import sys
from pathlib import Path

PYTHON = "3.13"  # Debian trixie's python3, what the node's venv runs
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_34_x86_64", "any")
PIP_CONF = (
    "[global]\nindex-url = http://sandbox-mirror/pypi/simple/\ntrusted-host = sandbox-mirror\n"
)


def pins_from_catalog() -> list[str]:
    from clusterctl.spec.catalog import catalog

    versions = catalog().versions
    pins = dict((versions.get("powerProgram") or {}).get("pypi") or {})
    # submitit: what a team user's venv on the login node installs (docs/training.md, "From Python")
    pins.update(((versions.get("training") or {}).get("submitit") or {}).get("pypi") or {})
    # jupyterlab: what `clusterctl notebook`'s job installs into the user's venv on first use
    pins.update((versions.get("notebook") or {}).get("pypi") or {})
    return [f"{name}=={version}" for name, version in sorted(pins.items())]


def digest(pins: list[str]) -> str:
    return hashlib.sha256("\n".join([Path(__file__).read_text(), *pins]).encode()).hexdigest()[:12]


def build(out: Path, pins: list[str]) -> None:
    """Download `pins` and their dependencies as wheels for the node's Python; index them."""
    wheels = out / "wheels"
    wheels.mkdir(parents=True)
    platforms = [a for p in PLATFORMS for a in ("--platform", p)]
    argv = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
            "--only-binary=:all:", "--python-version", PYTHON, "--implementation", "cp",
            *platforms, "-d", str(wheels), *pins]  # fmt: skip
    if pins:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"pip download {' '.join(pins)} failed:\n{proc.stderr[-2000:]}")
    index(out)


def _project(wheel: str) -> str:
    return re.sub(r"[-_.]+", "-", wheel.split("-")[0]).lower()


def index(out: Path) -> None:
    simple = out / "simple"
    projects: dict[str, list[Path]] = {}
    for whl in sorted((out / "wheels").glob("*.whl")):
        projects.setdefault(_project(whl.name), []).append(whl)
    for name, files in projects.items():
        d = simple / name
        d.mkdir(parents=True, exist_ok=True)
        links = "".join(
            f'<a href="../../wheels/{html.escape(f.name)}#sha256='
            f'{hashlib.sha256(f.read_bytes()).hexdigest()}">{html.escape(f.name)}</a><br>\n'
            for f in files
        )
        (d / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    simple.mkdir(parents=True, exist_ok=True)
    top = "".join(f'<a href="{n}/">{n}</a><br>\n' for n in sorted(projects))
    (simple / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{top}</body></html>\n")
