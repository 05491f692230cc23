"""The SKU catalog against FACTS.md section 1, and every number with its source."""

from __future__ import annotations

import pytest
import yaml

from clusterctl.errors import UserError
from clusterctl.project import config_dir
from clusterctl.spec.catalog import CATALOG_FILES, catalog, load_catalog

FACTS = {  # type: (cloud, gpus, gpu model, fabric kind, fabric NICs)
    "Standard_ND96asr_v4": ("azure", 8, "A100", "infiniband", 8),
    "Standard_ND96amsr_A100_v4": ("azure", 8, "A100", "infiniband", 8),
    "Standard_ND96isr_H100_v5": ("azure", 8, "H100", "infiniband", 8),
    "Standard_ND96isr_H200_v5": ("azure", 8, "H200", "infiniband", 8),
    "p4d.24xlarge": ("aws", 8, "A100", "efa", 4),
    "p4de.24xlarge": ("aws", 8, "A100", "efa", 4),
    "p5.48xlarge": ("aws", 8, "H100", "efa", 32),
    "p5e.48xlarge": ("aws", 8, "H200", "efa", 32),
    "p5en.48xlarge": ("aws", 8, "H200", "efa", 16),
}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_every_facts_type_is_in_the_catalog(name: str) -> None:
    sku = catalog().get(name)
    assert sku is not None
    cloud, gpus, model, fabric, nics = FACTS[name]
    assert (sku.cloud, sku.gpus, sku.gpu_model, sku.fabric.kind, sku.fabric.nics) == (
        cloud,
        gpus,
        model,
        fabric,
        nics,
    )
    if cloud == "azure":
        assert sku.vcpus == 96 and sku.gen2_only is True
        assert sku.fabric.gbps_per_nic == (200 if model == "A100" else 400)


def test_every_baseline_and_price_has_a_source() -> None:
    checked = 0
    for sku in catalog().skus:
        assert sku.price.source.strip() and sku.price.as_of and sku.price.region
        for baseline in (sku.nccl.single_node, sku.nccl.multi_node) if sku.nccl else ():
            if baseline is not None:
                assert baseline.source.strip(), sku.name
                if baseline.fail_below_gbps is not None:
                    assert baseline.message_bytes and baseline.message_bytes >= 1 << 30
                checked += 1
    assert checked >= 9


def test_h100_thresholds_follow_the_health_check_config() -> None:
    sku = catalog().get("Standard_ND96isr_H100_v5")
    single = sku.baseline(1)
    assert single.fail_below_gbps == 460 and single.message_bytes == 16 << 30
    assert "azurehpc-health-checks" in single.source


def test_a_baseline_without_source_is_refused(tmp_path) -> None:
    for name in CATALOG_FILES:
        (tmp_path / name).write_text((config_dir() / name).read_text())
    doc = yaml.safe_load((tmp_path / "skus.yaml").read_text())
    doc["skus"][0]["nccl"]["singleNode"]["source"] = " "
    (tmp_path / "skus.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(UserError) as caught:
        load_catalog(tmp_path)
    assert "skus[0].nccl.singleNode.source" in caught.value.problems[0]


def test_a_resource_disk_size_needs_its_source():
    from clusterctl.spec.catalog import Sku, load_catalog

    raw = load_catalog().get("Standard_ND96asr_v4").model_dump(by_alias=True, exclude_none=True)
    assert raw["resourceDiskGiB"] == 6000
    raw.pop("resourceDiskSource")
    with pytest.raises(ValueError, match="resourceDiskGiB needs a resourceDiskSource"):
        Sku.model_validate(raw)
