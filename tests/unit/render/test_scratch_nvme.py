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


def _run(tmp_path: Path, stack: str, listing: str) -> tuple[subprocess.CompletedProcess, str]:
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
