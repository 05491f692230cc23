"""The EFA network-interface layout of a multi-card instance, as AWS documents it today.

EC2 user guide, "Maximize network bandwidth on Amazon EC2 instances with multiple network cards"
(efa-acc-inst-types): the primary interface (card 0, device 0) is a plain ENA `interface`; card 0
also gets an `efa-only` interface at device 1; every further card gets one `efa-only` at device 0.
So a p5.48xlarge (32 EFA interfaces) has 33 entries: 32 EFA devices plus one ENA device. Older tools
put `efa` (EFA with ENA) on every card, which spends an IP address per card for nothing.

The count is the type's `EfaInfo.MaximumEfaInterfaces`, not `MaximumNetworkCards` (eksctl PR 8692);
the catalog's `fabric.nics` holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

InterfaceType = Literal["interface", "efa-only"]


@dataclass(frozen=True)
class EfaInterface:
    network_card_index: int
    device_index: int
    interface_type: InterfaceType

    @property
    def is_efa(self) -> bool:
        return self.interface_type != "interface"


def efa_interfaces(efa_count: int) -> list[EfaInterface]:
    """The launch template's interfaces for a type with `efa_count` EFA interfaces."""
    if efa_count < 1:
        raise ValueError(f"an EFA layout needs at least one EFA interface, not {efa_count}")
    layout = [EfaInterface(0, 0, "interface"), EfaInterface(0, 1, "efa-only")]
    layout += [EfaInterface(card, 0, "efa-only") for card in range(1, efa_count)]
    return layout
