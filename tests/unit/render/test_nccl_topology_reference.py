"""The AKS NCCL topology ConfigMap against Azure/azhpc-images' own files.

The reference copies (tests/data/azhpc-topology, SOURCES.md there) are Azure's, not ours: a
golden copy of our own output once locked in NUMA affinity masks Azure had already corrected.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clusterctl.render.kubernetes import nccl_topology_xml
from clusterctl.spec.kubernetes import NCCL_TOPOLOGY

REFERENCE = Path(__file__).resolve().parents[2] / "data" / "azhpc-topology"
SHA256 = {
    "ndv5": "c26ff47f1decf03d44ee6e90c4a8afd3bddeec334c5545008f33af2a297e2834",
    "ndv4": "c3583efb0b6e53f52410e32643b46bb6af99f5f34dcebc1868c47c233f84d2cf",
}
CPU_KEYS = ("numaid", "affinity", "arch", "vendor", "familyid", "modelid")
DEVICE_KEYS = ("busid", "class", "link_speed", "link_width")


def shape(xml: str) -> list[tuple]:
    """What NCCL reads: per NUMA node its CPU attributes, per PCIe switch its devices."""
    root = ET.fromstring(xml)
    assert root.tag == "system"
    return [
        (
            tuple(cpu.get(k) for k in CPU_KEYS),
            [
                (
                    tuple(bridge.get(k) for k in DEVICE_KEYS),
                    [tuple(dev.get(k) for k in DEVICE_KEYS) for dev in bridge.findall("pci")],
                )
                for bridge in cpu.findall("pci")
            ],
        )
        for cpu in root.findall("cpu")
    ]


@pytest.mark.parametrize("family", sorted(NCCL_TOPOLOGY))
def test_rendered_topology_matches_azhpc_images(family: str) -> None:
    ref = (REFERENCE / f"{family}-topo.xml").read_bytes()
    assert hashlib.sha256(ref).hexdigest() == SHA256[family], "the reference copy was edited"
    assert shape(nccl_topology_xml(family)) == shape(ref.decode())


def test_ndv5_affinity_masks_are_azures_corrected_ones() -> None:
    """NUMA 0 holds CPUs 0-47, NUMA 1 CPUs 48-95 (azhpc-images commit 992d775)."""
    masks = [cpu.get("affinity") for cpu in ET.fromstring(nccl_topology_xml("ndv5")).iter("cpu")]
    assert masks == ["00000000,0000ffff,ffffffff", "ffffffff,ffff0000,00000000"]
    cpus = [int(m.replace(",", ""), 16) for m in masks]
    assert cpus[0] == (1 << 48) - 1 and cpus[1] == ((1 << 96) - 1) ^ cpus[0]
