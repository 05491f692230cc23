"""`clusterctl doctor` names each missing host tool with its package, and its one
tool list (HOST_TOOLS) is what the README's first command and `.ci/run` install."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

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
    from clusterctl import host_tools

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


def _stub(folder: Path, name: str, script: str = "exit 0") -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def test_doctor_says_per_path_what_it_lacks_kubelogin_included(tmp_path: Path) -> None:
    _stub(tmp_path, "kubectl", "echo 'Client Version: v1.33.1'")
    got = run_cli("doctor", "--path", "kubernetes", PATH=str(tmp_path))
    assert got.returncode == 1, got.stdout + got.stderr
    lines = got.stdout.splitlines()
    assert lines[0] == "kubernetes  lacks kubelogin"
    assert any(x.startswith("missing  kubelogin: ") and "az aks install-cli" in x for x in lines)
    assert not any(x.startswith("ok ") for x in lines)  # found ones only with --verbose
    loud = run_cli("doctor", "--path", "kubernetes", "--verbose", PATH=str(tmp_path))
    assert f"ok       kubectl ({tmp_path}/kubectl, Client Version: v1.33.1)" in loud.stdout
    every = run_cli("doctor", "--json", PATH=str(tmp_path))
    paths = json.loads(every.stdout)["paths"]
    assert set(paths) == {"plan", "sandbox", "azure", "aws", "kubernetes"}
    assert paths["plan"]["ready"] is True and paths["kubernetes"]["missing"] == ["kubelogin"]
    assert paths["azure"]["missing"] == ["pulumi", "az"]


@pytest.mark.parametrize(
    ("printed", "state"),
    [
        ("aws-cli/1.22.0 Python/3.8.10 Linux/5.15 botocore/1.23.0", "unusable"),
        ("aws-cli/1.33.0 Python/3.11.2 Linux/6.1 botocore/1.34.0", "note"),
        ("aws-cli/2.17.0 Python/3.11.9 Linux/6.1 exe/x86_64.debian.12", "ok"),
    ],
)
def test_doctor_tells_aws_cli_v1_from_v2(tmp_path: Path, printed: str, state: str) -> None:
    _stub(tmp_path, "pulumi", "echo v3.150.0")
    _stub(tmp_path, "aws", f"echo '{printed}' >&2")  # v1 prints its version on stderr
    got = run_cli("doctor", "--path", "aws", "--verbose", PATH=str(tmp_path))
    (line,) = [x for x in got.stdout.splitlines() if " aws (" in x]
    assert line.split()[0] == state, got.stdout
    assert got.returncode == (1 if state == "unusable" else 0), got.stdout
    if state == "unusable":
        assert "v1alpha1" in line and "install AWS CLI v2" in line


def test_doctor_refuses_a_path_it_does_not_know_in_one_line() -> None:
    got = run_cli("doctor", "--path", "gcp")
    assert got.returncode == 2
    assert got.stderr.strip().splitlines() == [
        "error: --path gcp: not a path; choose one of plan, sandbox, azure, aws, kubernetes"
    ]
