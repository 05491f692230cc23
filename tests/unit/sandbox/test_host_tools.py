"""HOST_TOOLS (clusterctl/host_tools.py) names every program the sandbox's own code runs on
the host, so `doctor`, `sandbox up`'s preflight and the README's install line cover them all."""

from __future__ import annotations

import re
from pathlib import Path

from clusterctl import host_tools
from clusterctl.host_tools import HOST_TOOLS, missing_lines

ROOT = Path(__file__).parents[3]
# The forms that start a host program: subprocess calls, the sandbox's run helpers, and the argv
# lists its builders return (`argv = [`, `return [` of a *_argv function, `openssl = [`).
CALL = re.compile(
    r"(?:subprocess\.\w+\(|_run\(|_run_with_progress\(|\b(?:argv|cmd|openssl)\s*=\s*|\breturn\s+)"
    r"\s*\[\s*\"([a-z][a-z0-9.+_-]*)\"\s*[,\]]",
)


def _programs() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted((ROOT / "clusterctl" / "sandbox").rglob("*.py")):
        if "files" in path.relative_to(ROOT).parts:
            continue  # placed on the nodes, not run on the host
        for m in CALL.finditer(path.read_text()):
            found.setdefault(m.group(1), str(path.relative_to(ROOT)))
    return found


def test_every_program_the_sandbox_runs_on_the_host_is_a_host_tool() -> None:
    """Old code: chroot, mount, umount, nsenter, mkfs.ext4 and more were run but not listed, so a
    fresh machine without e2fsprogs passed `doctor` and failed in `sandbox up`."""
    programs = _programs()
    for expected in ("systemd-nspawn", "mmdebstrap", "chroot", "mount", "nsenter", "openssl"):
        assert expected in programs, f"the scan no longer sees {expected}: fix CALL"
    listed = {t.name for t in HOST_TOOLS}
    unlisted = {p: where for p, where in programs.items() if p not in listed}
    assert not unlisted, f"add to HOST_TOOLS: {unlisted}"


def test_missing_tools_are_named_with_their_package(monkeypatch) -> None:
    monkeypatch.setattr(host_tools, "found_at", lambda name: None if name == "mkfs.ext4" else name)
    gone = host_tools.missing()
    assert [t.name for t in gone] == ["mkfs.ext4"]
    assert missing_lines(gone) == [
        "mkfs.ext4 is missing (formats the nodes' disks); it comes with e2fsprogs",
        "install them: sudo apt-get install e2fsprogs",
    ]
