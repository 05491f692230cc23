"""The node shape is catalog data: sockets, GPU device files, fabric manager, IMEX and the NVLink
domain render from the SKU's `node` block, never from an 8-GPU x86 literal."""

from __future__ import annotations

import pytest
import yaml

from clusterctl.errors import UserError
from clusterctl.project import config_dir
from clusterctl.render.scripts import node_scripts
from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import render_slurm
from clusterctl.spec.catalog import CATALOG_FILES, NodeShape, catalog, load_catalog
from clusterctl.spec.load import load_stack_spec


def _with_shape(name: str, **changes):
    """The shipped catalog with one SKU's shape (and top-level fields) changed."""
    cat = catalog()
    shape_keys = set(NodeShape.model_fields)
    skus = []
    for sku in cat.skus:
        if sku.name == name:
            shape = sku.shape.model_copy(
                update={k: v for k, v in changes.items() if k in shape_keys}
            )
            top = {k: v for k, v in changes.items() if k not in shape_keys}
            sku = sku.model_copy(update={**top, "node": shape})
        skus.append(sku)
    return cat.model_copy(update={"skus": tuple(skus)})


def test_every_gpu_size_has_a_sourced_shape() -> None:
    for sku in catalog().skus:
        if sku.gpus:
            assert sku.node is not None and sku.node.source.strip(), sku.name
            assert sku.node.nvlink_domain_gpus % sku.gpus == 0, sku.name


def test_a_gpu_size_without_a_shape_is_refused(tmp_path) -> None:
    for name in set(CATALOG_FILES) - {"skus.yaml"}:
        (tmp_path / name).write_text((config_dir() / name).read_text())
    raw = yaml.safe_load((config_dir() / "skus.yaml").read_text())
    del raw["skus"][0]["node"]
    (tmp_path / "skus.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(UserError, match="needs a `node` shape"):
        load_catalog(tmp_path)


def test_slurm_node_lines_and_gres_come_from_the_shape() -> None:
    """Old code: SocketsPerBoard=2 and File=/dev/nvidia[0-7] whatever the SKU said."""
    spec, _ = load_stack_spec("azure-h100", [])
    cat = _with_shape("Standard_ND96isr_H100_v5", sockets=4, gpus=4, nvlink_domain_gpus=4)
    files = render_slurm(spec, cloud_site(spec), "azure-h100", cat)
    assert "SocketsPerBoard=4 CoresPerSocket=24 " in files["slurm.conf"]
    assert "Gres=gpu:h100:4 " in files["slurm.conf"]
    assert "File=/dev/nvidia[0-3]" in files["gres.conf"]
    assert "[0-7]" not in files["gres.conf"]


def test_the_shipped_stacks_keep_two_sockets_and_eight_gpus() -> None:
    spec, _ = load_stack_spec("azure-h100", [])
    files = render_slurm(spec, cloud_site(spec), "azure-h100", catalog())
    assert "SocketsPerBoard=2 CoresPerSocket=48 " in files["slurm.conf"]
    assert "File=/dev/nvidia[0-7]" in files["gres.conf"]
    assert "TopologyPlugin=topology/tree" in files["slurm.conf"]


def test_fabric_manager_and_imex_follow_the_shape() -> None:
    spec, _ = load_stack_spec("azure-h100", [])
    site = cloud_site(spec)
    hgx = catalog().require("Standard_ND96isr_H100_v5")
    setup = node_scripts(spec, site, hgx)["gpu-node-setup.sh"]
    assert "systemctl start nvidia-fabricmanager" in setup and "nvidia-imex" not in setup
    nvl = _with_shape("Standard_ND96isr_H100_v5", fabric_manager=False, imex=True)
    setup = node_scripts(spec, site, nvl.require("Standard_ND96isr_H100_v5"))["gpu-node-setup.sh"]
    assert "nvidia-fabricmanager" not in setup
    assert "systemctl enable --now nvidia-imex.service" in setup


def test_an_nvlink_domain_across_vms_becomes_slurm_blocks() -> None:
    spec, _ = load_stack_spec("azure-h100", ["partitions[0].nodes=40"])
    cat = _with_shape("Standard_ND96isr_H100_v5", gpus=4, nvlink_domain_gpus=72)
    files = render_slurm(spec, cloud_site(spec), "azure-h100", cat)
    assert "TopologyPlugin=topology/block" in files["slurm.conf"]
    blocks = [line for line in files["topology.conf"].splitlines() if line.startswith("Block")]
    assert blocks == [
        "BlockName=gpu-pg0-nvl0 Nodes=gpu-pg0-[1-18]",
        "BlockName=gpu-pg0-nvl1 Nodes=gpu-pg0-[19-36]",
        "BlockName=gpu-pg0-nvl2 Nodes=gpu-pg0-[37-40]",
        "BlockSizes=18",  # three blocks in the set: no pair stays inside it at every boundary
    ]
    assert "SwitchName" not in files["topology.conf"]


def test_a_shape_whose_image_family_is_missing_or_of_another_arch_is_refused(tmp_path) -> None:
    for name in set(CATALOG_FILES) - {"skus.yaml"}:
        (tmp_path / name).write_text((config_dir() / name).read_text())
    raw = yaml.safe_load((config_dir() / "skus.yaml").read_text())
    raw["skus"][0]["node"]["imageFamily"] = "nope"
    raw["skus"][1]["node"]["cpuArch"] = "arm64"
    (tmp_path / "skus.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(UserError) as err:
        load_catalog(tmp_path)
    assert "no image family 'nope'" in str(err.value)
    assert "node.cpuArch arm64 but image family 'ubuntu-hpc' is x86_64" in str(err.value)
