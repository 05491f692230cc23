"""Issue 30 item 12: `clusterctl doctor` names each missing host tool with its package, and its one
tool list (HOST_TOOLS) is what the README's first command and `.ci/run` install."""

from __future__ import annotations

import json
import re
from pathlib import Path

from clusterctl.cli.doctor import HOST_TOOLS
from tests.cli.conftest import ROOT, run_cli


def _readme_install_line() -> str:
    (line,) = [x for x in (ROOT / "README.md").read_text().splitlines() if "apt-get install" in x][
        :1
    ]
    (install,) = [part for part in line.split("&&") if "apt-get install" in part]
    return install


def _ci_install_packages() -> set[str]:
    text = (ROOT / ".ci" / "run").read_text()
    block = re.search(r"apt-get install (.*?)>/dev/null", text, re.S)
    assert block, ".ci/run has no apt-get install line"
    return {w for w in block.group(1).replace("\\\n", " ").split() if not w.startswith("-")}


def test_readme_first_command_and_ci_install_every_host_tool_package() -> None:
    readme = set(_readme_install_line().split())
    ci = _ci_install_packages()
    needed = {t.package for t in HOST_TOOLS if not t.essential}
    assert needed - readme == set(), "README's first command lacks these packages"
    assert needed - ci == set(), ".ci/run's apt line lacks these packages"


def test_doctor_names_each_missing_tool_and_its_package(tmp_path: Path) -> None:
    got = run_cli("doctor", PATH=str(tmp_path))  # nothing on PATH (sbin is still searched)
    programs = [t for t in HOST_TOOLS if not t.name.startswith("/")]
    missing = [t for t in programs if not Path("/usr/sbin", t.name).exists()]
    missing = [t for t in missing if not Path("/sbin", t.name).exists()]
    assert missing, "every tool is in sbin: this test cannot see doctor find one missing"
    assert got.returncode == 1, got.stdout + got.stderr
    for tool in missing:
        assert re.search(
            rf"^missing  {re.escape(tool.name)}: .*apt-get install {tool.package}$",
            got.stdout,
            re.M,
        ), (tool, got.stdout)


def test_doctor_passes_when_every_tool_is_there(tmp_path: Path) -> None:
    for tool in HOST_TOOLS:
        if not tool.name.startswith("/"):
            stub = tmp_path / tool.name
            stub.write_text("#!/bin/sh\n")
            stub.chmod(0o755)
    keyring = next(t for t in HOST_TOOLS if t.name.startswith("/"))
    got = run_cli("doctor", "--json", PATH=str(tmp_path))
    if not Path(keyring.name).is_file():
        assert got.returncode == 1
        return
    assert got.returncode == 0, got.stdout + got.stderr
    doc = json.loads(got.stdout)
    assert doc["ok"] is True
    assert all(h["found"] for h in doc["host"])


def test_sandbox_up_refuses_before_making_anything_when_a_tool_is_missing(
    cli, monkeypatch, tmp_path: Path
) -> None:
    """Old code: `sandbox up` started and failed deep inside the boot (mkfs.ext4: not found)."""
    import os

    # `sandbox up` checks root before its tools: root as far as that check sees, so any user
    # runs this test (it makes nothing that needs root)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    from clusterctl.sandbox import host_tools

    monkeypatch.setattr(
        host_tools, "found_at", lambda name: None if name == "mkfs.ext4" else f"/bin/{name}"
    )
    got = cli("sandbox", "up", "-s", "azure-h100", "--workdir", str(tmp_path / "vm"))
    from clusterctl.errors import UserError

    assert isinstance(got.exception, UserError), got.output  # main() prints it, exits 2
    assert str(got.exception).splitlines() == [
        "sandbox up: mkfs.ext4 is missing (formats the nodes' disks); it comes with e2fsprogs",
        "sandbox up: install them: sudo apt-get install e2fsprogs",
    ]
    assert not (tmp_path / "vm").exists() and not (tmp_path / "vm-plan").exists()
