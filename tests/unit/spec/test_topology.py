"""Scale sets fill in order, so a resize never shrinks a set that keeps running nodes."""

from __future__ import annotations

import pytest

from clusterctl.render.site import cloud_site
from clusterctl.render.slurm_conf import render_slurm
from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.power import power_plan
from clusterctl.spec.topology import scale_sets_of


def sizes(nodes: int, limit: int = 100) -> list[int]:
    return [g.size for g in scale_sets_of("gpu", nodes, limit)]


def test_growing_past_a_full_set_opens_a_new_one_and_keeps_the_full_one() -> None:
    assert sizes(100) == [100]
    assert sizes(101) == [100, 1]  # balanced (51 + 50) shrank pg0 by 49: Azure deleted them
    assert sizes(250) == [100, 100, 50]


def test_a_smaller_limit_gives_smaller_sets() -> None:
    assert sizes(4, 2) == [2, 2]
    assert sizes(5, 2) == [2, 2, 1]
    assert sizes(1, 2) == [1]


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 100])
def test_no_resize_ever_shrinks_a_set_that_stays(limit: int) -> None:
    for n in range(1, 320):
        before, after = sizes(n, limit), sizes(n + 1, limit)
        assert all(a >= b for a, b in zip(after, before, strict=False)) and len(after) >= len(
            before
        ), (n, limit)


def test_shrinking_takes_the_highest_names() -> None:
    names = lambda n: [h for g in scale_sets_of("gpu", n, 2) for h in g.hostnames()]  # noqa: E731
    assert names(5) == ["gpu-pg0-1", "gpu-pg0-2", "gpu-pg1-1", "gpu-pg1-2", "gpu-pg2-1"]
    for n in range(1, 12):
        assert names(n) == names(n + 1)[:n]


@pytest.mark.parametrize("limit", [0, 101])
def test_a_limit_outside_what_a_scale_set_holds_is_refused(limit: int) -> None:
    with pytest.raises(ValueError):
        scale_sets_of("gpu", 4, limit)


def test_max_nodes_per_scale_set_reaches_slurm_conf_and_power_saving() -> None:
    spec, _ = load_stack_spec(
        "azure-h100",
        [
            "partitions[0].nodes=5",
            "partitions[0].maxNodesPerScaleSet=2",
            "partitions[0].minNodes=3",
        ],
    )
    assert power_plan(spec).exc_nodes == "gpu-pg0-[1-2],gpu-pg1-1"
    conf = render_slurm(spec, cloud_site(spec), "azure-h100")["slurm.conf"]
    assert "gpu-pg0-[1-2],gpu-pg1-[1-2],gpu-pg2-1" in conf


@pytest.mark.parametrize("value", ["0", "101"])
def test_max_nodes_per_scale_set_is_bounded(value: str) -> None:
    from clusterctl.errors import UserError

    with pytest.raises(UserError, match="maxNodesPerScaleSet"):
        load_stack_spec("azure-h100", [f"partitions[0].maxNodesPerScaleSet={value}"])
