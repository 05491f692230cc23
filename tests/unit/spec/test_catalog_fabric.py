"""The catalog's fabric proof and multi-node expectations: for every SKU shipped, the
devices NCCL should list per host, whether GPUDirect RDMA is expected, and an expected figure with
its source or derivation; bad entries are refused with one line naming the field."""

from __future__ import annotations

import pytest
import yaml

from clusterctl.errors import UserError
from clusterctl.project import config_dir
from clusterctl.spec.catalog import CATALOG_FILES, catalog, load_catalog

FABRIC_SKUS = [s for s in catalog().skus if s.fabric.kind != "none"]


@pytest.mark.parametrize("sku", FABRIC_SKUS, ids=lambda s: s.name)
def test_every_fabric_sku_says_what_nccl_should_see_and_what_to_expect(sku) -> None:
    proof = sku.fabric.nccl
    assert proof is not None and proof.devices == sku.fabric.nics and proof.gdr is True
    assert proof.source.strip()
    multi = sku.baseline(2)
    assert multi is not None and multi.expected_gbps and multi.fail_below_gbps
    assert multi.warn_below_gbps and multi.levels_note
    if multi.expected_basis == "derived":
        assert multi.derivation and "x" in multi.derivation
    # never looser than 0.88 / 0.93 of expected unless a published line says so
    assert multi.fail_below_gbps / multi.expected_gbps >= 0.875
    assert multi.warn_below_gbps / multi.expected_gbps >= 0.925
    # and never above the line rate: a Ring run cannot beat the rails
    line_rate = sku.fabric.nics * (sku.fabric.gbps_per_nic or 0) / 8
    assert multi.expected_gbps <= line_rate


def test_the_issue_figures_on_nd_h100_v5() -> None:
    multi = catalog().require("Standard_ND96isr_H100_v5").baseline(2)
    # one rail of eight gone (8 x 48 -> 7 x 48 = 336 GB/s) must fail
    assert multi.fail_below_gbps > 7 * 48 and multi.expected_basis == "derived"
    assert catalog().require("Standard_ND96isr_H100_v5").fabric.nccl.device_prefix == "mlx5_ib"
    assert catalog().require("p5.48xlarge").fabric.nccl.devices == 32
    assert catalog().require("p4d.24xlarge").fabric.nccl.devices == 4
    assert catalog().require("Standard_ND128isr_NDR_GB200_v6").fabric.nccl.devices == 4


def _broken(tmp_path, change) -> list[str]:
    for name in CATALOG_FILES:
        (tmp_path / name).write_text((config_dir() / name).read_text())
    doc = yaml.safe_load((tmp_path / "skus.yaml").read_text())
    h100 = next(i for i, s in enumerate(doc["skus"]) if s["name"] == "Standard_ND96isr_H100_v5")
    change(doc["skus"][h100])
    (tmp_path / "skus.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(UserError) as caught:
        load_catalog(tmp_path)
    return caught.value.problems


def _set(path: str, value):
    def change(sku: dict) -> None:
        *parents, last = path.split(".")
        node = sku
        for p in parents:
            node = node[p]
        if value is None:
            node.pop(last)
        else:
            node[last] = value

    return change


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        ("fabric.nccl", None, "fabric.nccl missing for kind infiniband: give devices"),
        ("fabric.nccl.devices", 0, "greater than or equal to 1"),
        ("fabric.nccl.devices", 9, "fabric.nccl.devices 9 is more than fabric.nics 8"),
        ("fabric.nccl.gdr", None, "Field required"),
        ("fabric.nccl.source", " ", "needs a non-empty source"),
        ("nccl.multiNode.derivation", None, "expectedBasis derived needs a derivation"),
        ("nccl.multiNode.warnBelowGBps", 330.0, "warnBelowGBps 330 is below failBelowGBps 338"),
        ("nccl.multiNode.warnBelowGBps", 390.0, "warnBelowGBps 390 is above expectedGBps 384"),
        ("nccl.multiNode.expectedBasis", "guessed", "'measured' or 'derived'"),
    ],
)
def test_a_bad_fabric_or_baseline_entry_is_one_clear_line(tmp_path, path, value, says) -> None:
    problems = _broken(tmp_path, _set(path, value))
    assert len(problems) == 1, problems
    assert problems[0].startswith("config/skus[") and says in problems[0], problems[0]
