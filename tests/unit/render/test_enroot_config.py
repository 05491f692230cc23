"""The GPU nodes' enroot settings, read as enroot reads its conf files (`KEY VALUE` lines, `#`
comments): chosen to match Azure CycleCloud's pyxis project where enroot's defaults differ."""

from __future__ import annotations

import yaml

from clusterctl.render.bundle import render_bundle
from clusterctl.render.paths import ENROOT_CACHE, SCRATCH
from clusterctl.spec.load import load_stack_spec

DROP_IN = "/etc/enroot/enroot.conf.d/50-gpu-clusters.conf"


def _enroot_settings(stack: str) -> dict[str, str]:
    spec, _ = load_stack_spec(stack, [])
    user_data = yaml.safe_load(render_bundle(spec, stack)["cloud-init/gpu.yaml"])
    (text,) = [f["content"] for f in user_data["write_files"] if f["path"] == DROP_IN]
    settings = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.strip().partition(" ")
            settings[key] = value.strip()
    return settings


def test_containers_get_a_writable_root_their_home_and_fast_imports() -> None:
    """Old: a read-only root (`pip install` failed in a job), no /home, enroot's lzo squash."""
    for stack in ("azure-h100", "azure-a100"):
        s = _enroot_settings(stack)
        assert s["ENROOT_ROOTFS_WRITABLE"] == "y"
        assert s["ENROOT_MOUNT_HOME"] == "y"
        assert s["ENROOT_SQUASH_OPTIONS"] == "-noI -noD -noF -noX -no-duplicates"
        assert s["ENROOT_RESTRICT_DEV"] == "y"
        assert s["ENROOT_RUNTIME_PATH"].startswith("/nvme/")


def test_the_layer_cache_survives_deallocation_and_unpacked_containers_stay_on_nvme() -> None:
    """Azure wipes the local NVMe when Slurm's power saving deallocates a node: with the layer
    cache there (old), every resumed node pulled its images again through the NAT gateway. The
    cache is on the OS disk, which deallocation keeps; data, runtime and temp stay on the NVMe."""
    for stack in ("azure-h100", "azure-a100"):
        s = _enroot_settings(stack)
        assert s["ENROOT_CACHE_PATH"] == f"{ENROOT_CACHE}/group-$(id -g)"
        assert not ENROOT_CACHE.startswith(SCRATCH + "/")
        for key in ("ENROOT_DATA_PATH", "ENROOT_RUNTIME_PATH", "ENROOT_TEMP_PATH"):
            assert s[key].startswith(f"{SCRATCH}/enroot/"), (key, s[key])
