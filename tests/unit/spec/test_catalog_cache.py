"""The validated catalog is cached per content: the same files give the cached object, a changed
file gives a fresh validation, and a damaged cache is rebuilt, never trusted."""

from __future__ import annotations

import shutil

import pytest

from clusterctl.spec import catalog as cat_mod


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    config = tmp_path / "config"
    shutil.copytree(cat_mod.config_dir(), config)
    monkeypatch.setenv("GPU_CLUSTERS_CONFIG_DIR", str(config))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cat_mod.catalog.cache_clear()
    yield config
    cat_mod.catalog.cache_clear()


def test_cache_is_written_reused_and_keyed_by_content(isolated) -> None:
    first = cat_mod.catalog()
    path = cat_mod._cache_file(isolated)
    assert path is not None and path.is_file()
    cat_mod.catalog.cache_clear()
    assert cat_mod.catalog() == first  # read back from the cache
    skus = isolated / "skus.yaml"
    skus.write_text(skus.read_text().replace("memoryGiB: 900", "memoryGiB: 901", 1))
    assert cat_mod._cache_file(isolated) != path  # new content, new key
    cat_mod.catalog.cache_clear()
    assert cat_mod.catalog().get("Standard_ND96asr_v4").memory_gi_b == 901


def test_a_damaged_cache_is_rebuilt(isolated) -> None:
    cat_mod.catalog()
    path = cat_mod._cache_file(isolated)
    path.write_bytes(b"not a pickle")
    cat_mod.catalog.cache_clear()
    assert len(cat_mod.catalog().skus) > 0
    assert path.read_bytes() != b"not a pickle"
