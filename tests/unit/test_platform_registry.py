"""The platform registry (clusterctl/clouds/, clusterctl/platform.py) and the components agree:
every cloud and scheduler pair is either built by a component or refused with the registry's
line."""

from __future__ import annotations

import itertools

from clusterctl import clouds, platform
from clusterctl.clouds import Feature

CLUSTERS = {
    (cloud.name, scheduler): component
    for cloud in clouds.all_clouds()
    for scheduler, component in cloud.clusters.items()
}


def test_every_platform_pair_is_built_or_refused_by_name() -> None:
    pairs = list(itertools.product(clouds.names(), platform.SCHEDULERS))
    assert len(pairs) == 4
    for cloud, scheduler in pairs:
        refused = platform.unsupported(Feature.CLUSTERS, cloud, scheduler)
        assert ((cloud, scheduler) in CLUSTERS) != bool(refused), (cloud, scheduler)
    assert set(CLUSTERS) <= set(pairs)


def test_every_component_a_cloud_names_exists() -> None:
    import importlib

    for module, name in CLUSTERS.values():
        assert isinstance(getattr(importlib.import_module(module), name), type)


def test_no_module_compares_a_cloud_or_scheduler_by_name() -> None:
    """Old code: 56 `cloud ==` / `scheduler ==` comparisons in 16 modules (33 in 12 at the start
    of this change). A platform question goes to clusterctl/clouds/ or clusterctl/platform.py (a
    property, or only_on for a rule), or to a table keyed by the name."""
    import re
    from pathlib import Path

    root = Path(__file__).parents[2]
    pattern = re.compile(r"\b(cloud|scheduler)\s*(==|!=)\s*['\"]")
    found = [
        f"{p.relative_to(root)}:{n}"
        for top in ("clusterctl", "components")
        for p in sorted((root / top).rglob("*.py"))
        if p.name != "platform.py" and p.parent.name != "clouds"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line.split("#")[0])
    ]
    assert not found, found


def test_a_rule_marked_for_a_platform_runs_only_there() -> None:
    from clusterctl.spec.load import RULES

    marked = {r.__name__: r.platform for r in RULES if hasattr(r, "platform")}
    assert marked["zones_belong_to_region"] == ("aws", platform.ANY)
    assert marked["disk_sizes"] == ("azure", "slurm")
    assert platform.applies(RULES[0], "aws", "kubernetes")  # unmarked: everywhere
    rule = next(r for r in RULES if r.__name__ == "aks_pool_names")
    assert platform.applies(rule, "azure", "kubernetes")
    assert not platform.applies(rule, "aws", "kubernetes")
    assert not platform.applies(rule, "azure", "slurm")
