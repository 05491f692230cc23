"""Our NCCL settings survive the HPC image's boot-time rewrite of /etc/nccl.conf: the
rendered merge script, run by bash, replaces our keys and keeps the image's other lines."""

from __future__ import annotations

import os
import subprocess

from tests.conftest import node_script

IMAGE_WRITES = (  # what sku-customizations writes on an ND H100 v5 (Azure/azhpc-images)
    "NCCL_IB_PCI_RELAXED_ORDERING=1\n"
    "NCCL_TOPO_FILE=/opt/microsoft/ndv5/topo.xml\n"
    "NCCL_IGNORE_CPU_AFFINITY=1\n"
)


def _merge(tmp_path, ours: str) -> str:
    script = tmp_path / "merge.sh"
    script.write_text(node_script("azure-h100", "gpucl-nccl-conf.sh"))
    (tmp_path / "ours.conf").write_text(ours)
    env = {
        **os.environ,
        "GPUCL_NCCL_OURS": str(tmp_path / "ours.conf"),
        "GPUCL_NCCL_CONF": str(tmp_path / "nccl.conf"),
    }
    subprocess.run(["bash", str(script)], env=env, check=True)
    return (tmp_path / "nccl.conf").read_text()


def test_our_keys_win_and_the_images_other_lines_stay(tmp_path) -> None:
    (tmp_path / "nccl.conf").write_text(IMAGE_WRITES)
    ours = "# ours\nNCCL_TOPO_FILE=/etc/gpu-clusters/topo.xml\nNCCL_SOCKET_IFNAME=eth0\n"
    merged = _merge(tmp_path, ours).splitlines()
    assert "NCCL_TOPO_FILE=/etc/gpu-clusters/topo.xml" in merged
    assert "NCCL_TOPO_FILE=/opt/microsoft/ndv5/topo.xml" not in merged
    assert {"NCCL_IB_PCI_RELAXED_ORDERING=1", "NCCL_IGNORE_CPU_AFFINITY=1"} <= set(merged)
    again = _merge(tmp_path, ours).splitlines()  # the next boot: the same file, not a longer one
    assert sorted(again) == sorted(merged)


def test_a_missing_or_emptied_file_gets_our_keys(tmp_path) -> None:
    assert _merge(tmp_path, "NCCL_IB_QPS_PER_CONNECTION=4\n") == "NCCL_IB_QPS_PER_CONNECTION=4\n"
