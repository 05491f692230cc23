"""The platform registry (clusterctl/platform.py) and the program's component table agree: every
cloud and scheduler pair is either built by a component or refused with the registry's line."""

from __future__ import annotations

import itertools

from clusterctl import platform
from components.program import CLUSTERS


def test_every_platform_pair_is_built_or_refused_by_name() -> None:
    pairs = list(itertools.product(platform.CLOUDS, platform.SCHEDULERS))
    assert len(pairs) == 4
    for cloud, scheduler in pairs:
        refused = platform.unsupported("clusters", cloud, scheduler)
        assert ((cloud, scheduler) in CLUSTERS) != bool(refused), (cloud, scheduler)
    assert set(CLUSTERS) <= set(pairs)


def test_every_component_in_the_table_exists() -> None:
    import importlib

    for module, name in CLUSTERS.values():
        assert isinstance(getattr(importlib.import_module(module), name), type)
