"""The catalog's figures for NCCL's default algorithm on 2+ nodes (nccl.multiNodeDefault): each
with its source or a labelled derivation, lines at the Ring lines' ratios, and above what Ring
can reach, since they are not Ring figures."""

from __future__ import annotations

import pytest
import yaml

from clusterctl.errors import UserError
from clusterctl.project import config_dir
from clusterctl.spec.catalog import CATALOG_FILES, catalog, load_catalog

WITH_DEFAULT = [s for s in catalog().skus if s.nccl and s.nccl.multi_node_default]


def test_the_published_default_algorithm_figures_are_in_the_catalog() -> None:
    names = {s.name for s in WITH_DEFAULT}
    assert {"Standard_ND96isr_H100_v5", "p5.48xlarge"} <= names
    for name in ("Standard_ND96isr_H100_v5", "p5.48xlarge"):  # measured: the source has a run
        assert catalog().require(name).baseline(2, default_algorithm=True).expected_basis == (
            "measured"
        )


@pytest.mark.parametrize("sku", WITH_DEFAULT, ids=lambda s: s.name)
def test_each_default_algorithm_figure_is_sourced_and_above_ring(sku) -> None:
    own = sku.baseline(2, default_algorithm=True)
    ring = sku.baseline(2)
    assert own is not sku.baseline(1) and own is not ring
    assert own.source.strip() and own.levels_note and own.message_bytes >= 1 << 30
    if own.expected_basis == "derived":
        assert own.derivation and own.derivation.strip()
    assert own.fail_below_gbps < own.warn_below_gbps < own.expected_gbps
    assert own.fail_below_gbps / own.expected_gbps >= 0.875
    # NVLS-Tree / SHARP figures sit above what a Ring run over the same rails reaches
    assert own.expected_gbps > ring.expected_gbps


def test_a_default_algorithm_figure_with_its_lines_out_of_order_is_refused(tmp_path) -> None:
    for name in CATALOG_FILES:
        (tmp_path / name).write_text((config_dir() / name).read_text())
    doc = yaml.safe_load((tmp_path / "skus.yaml").read_text())
    i = next(i for i, s in enumerate(doc["skus"]) if s["name"] == "p5.48xlarge")
    doc["skus"][i]["nccl"]["multiNodeDefault"]["warnBelowGBps"] = 500.0
    (tmp_path / "skus.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(UserError) as caught:
        load_catalog(tmp_path)
    (line,) = caught.value.problems
    assert f"skus[{i}].nccl.multiNodeDefault" in line and "above expectedGBps 487.09" in line
