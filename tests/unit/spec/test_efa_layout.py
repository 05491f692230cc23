"""The EFA interface layout AWS documents today (EC2 user guide, efa-acc-inst-types)."""

from __future__ import annotations

import pytest

from clusterctl.spec.efa import efa_interfaces


@pytest.mark.parametrize(("efa_count", "sku"), [(32, "p5.48xlarge"), (16, "p5en"), (4, "p4d")])
def test_layout(efa_count: int, sku: str) -> None:
    layout = efa_interfaces(efa_count)
    assert len(layout) == efa_count + 1, "one ENA interface plus one entry per EFA interface"
    assert [i.is_efa for i in layout].count(True) == efa_count
    primary, card0_efa, *others = layout
    assert (primary.network_card_index, primary.device_index, primary.interface_type) == (
        0,
        0,
        "interface",
    )
    assert (card0_efa.network_card_index, card0_efa.device_index) == (0, 1)
    assert card0_efa.interface_type == "efa-only"
    assert [i.network_card_index for i in others] == list(range(1, efa_count))
    assert {(i.device_index, i.interface_type) for i in others} == {(0, "efa-only")}
    pairs = [(i.network_card_index, i.device_index) for i in layout]
    assert len(set(pairs)) == len(pairs), "no two interfaces share a card and device index"


def test_single_efa_interface() -> None:
    assert [
        (i.network_card_index, i.device_index, i.interface_type) for i in efa_interfaces(1)
    ] == [
        (0, 0, "interface"),
        (0, 1, "efa-only"),
    ]


@pytest.mark.parametrize("bad", [0, -1])
def test_refuses_no_efa(bad: int) -> None:
    with pytest.raises(ValueError, match="at least one EFA"):
        efa_interfaces(bad)
