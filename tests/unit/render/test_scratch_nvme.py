"""Local NVMe detection in gpucl-scratch.sh, run on lsblk listings.

The listings below are written from the model strings Azure documents (azure-vm-utils' udev rules:
"Microsoft NVMe Direct Disk", "Microsoft NVMe Direct Disk v2" for local disks, "MSFT NVMe
Accelerator v1.0" for remote managed disks on NVMe-controller sizes) in `lsblk -dpno NAME,MODEL`'s
layout (model padded with spaces); they are not captured from a live VM. The script runs with
stand-ins for lsblk, udevadm, mdadm, mkfs.xfs, mount, mountpoint and blkid on PATH, its mount point
moved under tmp_path."""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from clusterctl.render.cloud_init import render_cloud_init
from clusterctl.render.paths import ENROOT_CACHE, ENROOT_CACHE_GIB
from clusterctl.render.user_data import MUNGE_PLACEHOLDER
from clusterctl.spec.load import load_stack_spec

SCRIPT = "/usr/local/libexec/gpu-clusters/gpucl-scratch.sh"

OS_DISKS = "".join(f"/dev/sd{x}  Virtual Disk                            \n" for x in "ab")
A100_V4 = OS_DISKS + "".join(
    f"/dev/nvme{i}n1 Microsoft NVMe Direct Disk              \n" for i in range(8)
)
H100_V5 = OS_DISKS + "".join(
    f"/dev/nvme{i}n1 Microsoft NVMe Direct Disk v2           \n" for i in range(8)
)
REMOTE_ONLY = "/dev/nvme0n1 MSFT NVMe Accelerator v1.0              \n"


def _script(stack: str) -> str:
    spec, _ = load_stack_spec(stack, [])
    ud = render_cloud_init(
        spec, stack, munge_key_b64=MUNGE_PLACEHOLDER, partition=spec.partitions[0]
    )
    entry = {f["path"]: f for f in yaml.safe_load(ud)["write_files"]}[SCRIPT]
    if entry.get("encoding") == "gz+b64":
        return gzip.decompress(base64.b64decode(entry["content"])).decode()
    return entry["content"]


def _moved(script: str, line: str, to: str) -> str:
    assert line in script, f"gpucl-scratch.sh has no line {line!r}"
    return script.replace(line, to)


def _run(
    tmp_path: Path, stack: str, listing: str, cache_budget_kib: int | None = None
) -> tuple[subprocess.CompletedProcess, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    (tmp_path / "listing").write_text(listing)
    stubs = {
        # -dpno NAME,MODEL: the recorded listing; -dno MODEL: its model column.
        "lsblk": f'case "$*" in *NAME,MODEL*) cat {tmp_path}/listing ;; '
        f"*-dno\\ MODEL*) sed 's/^[^ ]* *//' {tmp_path}/listing ;; *) : ;; esac",
        "mountpoint": "exit 1",
        "blkid": "exit 2",
    }
    for name in ("udevadm", "mdadm", "mkfs.xfs", "mount"):
        stubs[name] = f'echo "{name} $*" >> {log}'
    for name, body in stubs.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(0o755)
    script = _script(stack).replace("mount_point=/nvme\n", f"mount_point={tmp_path}/nvme\n")
    script = _moved(script, f"cache={ENROOT_CACHE}\n", f"cache={tmp_path}/cache\n")
    if cache_budget_kib is not None:
        budget = f"cache_budget_kib=$(({ENROOT_CACHE_GIB} * 1024 * 1024))\n"
        script = _moved(script, budget, f"cache_budget_kib={cache_budget_kib}\n")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    return proc, log.read_text() if log.exists() else ""


@pytest.mark.parametrize(("stack", "listing"), [("azure-a100", A100_V4), ("azure-h100", H100_V5)])
def test_all_eight_local_disks_form_the_array(tmp_path: Path, stack: str, listing: str) -> None:
    proc, calls = _run(tmp_path, stack, listing)
    assert proc.returncode == 0, proc.stderr
    create = [c for c in calls.splitlines() if c.startswith("mdadm --create")]
    assert len(create) == 1, calls
    assert "--raid-devices=8" in create[0]
    assert [a for a in create[0].split() if a.startswith("/dev/nvme")] == [
        f"/dev/nvme{i}n1" for i in range(8)
    ]
    assert "/dev/sd" not in create[0]
    assert "udevadm settle --timeout=60" in calls


def test_a_size_with_local_nvme_that_finds_none_fails_with_the_reason(tmp_path: Path) -> None:
    """The old script said 'stays on the OS disk' and exited 0: NHC then drained every node on an
    unmounted scratch with no word of why."""
    proc, calls = _run(tmp_path, "azure-h100", OS_DISKS + REMOTE_ONLY)
    assert proc.returncode == 1
    assert "this size has 8 local NVMe disks and none was found" in proc.stderr
    assert "MSFT NVMe Accelerator v1.0" in proc.stderr
    assert "mount" not in calls.replace("udevadm", "")


def test_a_remote_nvme_disk_is_never_scratch(tmp_path: Path) -> None:
    proc, calls = _run(tmp_path, "azure-h100", H100_V5 + REMOTE_ONLY.replace("nvme0", "nvme8"))
    assert proc.returncode == 0, proc.stderr
    assert "/dev/nvme8n1" not in calls
    assert "--raid-devices=8" in calls


def test_fewer_disks_than_the_size_has_is_said(tmp_path: Path) -> None:
    listing = OS_DISKS + "/dev/nvme0n1 Microsoft NVMe Direct Disk v2           \n"
    proc, calls = _run(tmp_path, "azure-h100", listing)
    assert proc.returncode == 0, proc.stderr
    assert "expected 8 local NVMe disks, found 1: /dev/nvme0n1" in proc.stderr
    assert "mount -o noatime /dev/nvme0n1" in calls


def test_a_size_of_unknown_disk_count_says_what_it_saw(tmp_path: Path) -> None:
    """azure-a100's NVMe count is unverified (config/skus.yaml): no requirement, but the line names
    the models lsblk reported, so a drained node's journal shows what the detection missed."""
    proc, calls = _run(tmp_path, "azure-a100", OS_DISKS + REMOTE_ONLY)
    assert proc.returncode == 0, proc.stderr
    seen = "no local NVMe disks (models seen: MSFT NVMe Accelerator v1.0,Virtual Disk)"
    assert seen in proc.stderr
    assert "mount" not in calls.replace("udevadm", "")


def _layer(cache: Path, name: str, kib: int, read_at: float) -> Path:
    path = cache / "group-1000" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(kib * 1024))
    os.utime(path, (read_at, read_at))
    return path


def test_the_layer_cache_is_trimmed_to_its_budget_least_recently_read_first(
    tmp_path: Path,
) -> None:
    """enroot never evicts: on the OS disk (kept across deallocation) an unbounded cache would
    fill the root file system. Old script: no cache on the OS disk, no trimming."""
    cache = tmp_path / "cache"
    old = _layer(cache, "sha256-old", 400, 1_000_000)
    middle = _layer(cache, "sha256-middle", 400, 2_000_000)
    recent = _layer(cache, "sha256-recent", 400, 3_000_000)
    proc, _ = _run(tmp_path, "azure-h100", H100_V5, cache_budget_kib=900)
    assert proc.returncode == 0, proc.stderr
    assert (old.exists(), middle.exists(), recent.exists()) == (False, True, True)
    assert "enroot's layer cache trimmed to" in proc.stderr
    assert oct((cache).stat().st_mode & 0o7777) == "0o1777"


def test_a_cache_within_its_budget_is_left_alone(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    layers = [_layer(cache, f"sha256-{i}", 100, 1_000_000 + i) for i in range(3)]
    proc, _ = _run(tmp_path, "azure-h100", H100_V5, cache_budget_kib=10_000)
    assert proc.returncode == 0, proc.stderr
    assert all(p.exists() for p in layers)
    assert "trimmed" not in proc.stderr
