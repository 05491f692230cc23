"""Which network NCCL chose, read from its INFO lines (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET).

NCCL says it once per process, `host:pid:tid [dev] NCCL INFO Using network IB` (init.cc), after
the transport's own line: `NET/IB : Using [0]mlx5_ib0:1/IB ...`, `NET/IB : No device found.`,
`NET/Socket : Using [0]eth0:10.0.0.4<0>`, or the AWS plugin's `NET/OFI Selected Provider is efa`.
Channel lines (`via NET/IB/0/GDRDMA`) say whether GPUDirect RDMA carried the data. A log without
any of these (NCCL_DEBUG unset) proves nothing either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Network", "networks_in"]

Kind = Literal["infiniband", "efa", "socket", "other"]

_INFO = re.compile(r"(?:^|\s)(?P<host>[\w.-]+)\s*:\d+:\d+\s+\[\d+\]\s+NCCL INFO\s+(?P<msg>.*)$")
_USING = re.compile(r"^Using network (?P<name>.+?)\s*$")
_NET_USING = re.compile(r"^NET/(?P<net>IB|Socket)\s*:\s*Using\s+(?P<devs>.*?)\s*(?:;\s*OOB.*)?$")
_OFI_PROVIDER = re.compile(r"^NET/OFI Selected Provider is (?P<prov>[\w;-]+)", re.I)
_VIA = re.compile(r"\bvia NET/(?P<net>[\w ]+?)/\d+(?P<gdr>/GDRDMA)?")
_DEVICE = re.compile(r"\[\d+\](?P<dev>[\w.-]+(?::\d+(?=/))?)")


@dataclass(frozen=True)
class Network:
    """What one network NCCL used, and on which hosts."""

    name: str
    """As NCCL names it: `IB`, `IBext_v8` (the SHARP plugin), `Socket`, `AWS Libfabric`."""
    kind: Kind
    hosts: tuple[str, ...]
    devices: tuple[str, ...] = ()
    provider: str | None = None
    """The libfabric provider the OFI plugin selected (`efa`; `tcp` is a fallback)."""
    gdr: bool | None = None
    """Some channel ran over GPUDirect RDMA (True), channels were seen but none did (False)."""

    @property
    def fabric(self) -> bool:
        return self.kind in ("infiniband", "efa")

    @property
    def label(self) -> str:
        """Short: `IB/GDRDMA`, `Socket`, `AWS Libfabric tcp;ofi_rxm`."""
        return (
            self.name
            + (f" {self.provider}" if self.provider else "")
            + ("/GDRDMA" if self.gdr else "")
        )

    def describe(self) -> str:
        """`NET/IB (mlx5_ib0:1, ... 8 devices; GPUDirect RDMA)`."""
        parts = []
        if self.provider:
            parts.append(f"provider {self.provider}")
        if self.devices:
            more = f" ... {len(self.devices)} devices" if len(self.devices) > 2 else ""
            parts.append(", ".join(self.devices[:2]) + more)
        if self.gdr is not None:
            parts.append("GPUDirect RDMA" if self.gdr else "no GPUDirect RDMA")
        return f"NET/{self.name}" + (f" ({'; '.join(parts)})" if parts else "")


def _kind(name: str, provider: str | None) -> Kind:
    if name.startswith("IB"):
        return "infiniband"
    if name == "Socket":
        return "socket"
    if "Libfabric" in name or name.startswith("OFI"):
        if provider is None:
            return "other"
        return "efa" if provider.split(";")[0].lower() == "efa" else "socket"
    return "other"


def networks_in(lines: Iterable[str]) -> tuple[Network, ...]:
    """The networks NCCL's INFO lines name, most hosts first; () when the log names none."""
    chosen: dict[str, list[str]] = {}  # network name -> hosts, in order
    devices: dict[str, list[str]] = {}
    provider: str | None = None
    gdr: dict[str, bool] = {}
    for line in lines:
        m = _INFO.search(line)
        if m is None:
            continue
        host, msg = m["host"], m["msg"].strip()
        if u := _USING.match(msg):
            hosts = chosen.setdefault(u["name"], [])
            if host not in hosts:
                hosts.append(host)
        elif n := _NET_USING.match(msg):
            seen = devices.setdefault(n["net"], [])
            seen += [d for d in _DEVICE.findall(n["devs"]) if d not in seen]
        elif p := _OFI_PROVIDER.match(msg):
            provider = p["prov"]
        elif v := _VIA.search(msg):
            name = v["net"].strip()
            gdr[name] = gdr.get(name, False) or bool(v["gdr"])
    if not chosen and devices:
        # NCCL before 2.6 printed no `Using network` line: the transport's own line says it
        for net in ("IB", "Socket"):
            if net in devices:
                chosen[net] = []
                break
    found = [
        Network(
            name=name,
            kind=_kind(name, provider),
            hosts=tuple(hosts),
            devices=tuple(devices.get("IB" if name.startswith("IB") else name, ())),
            provider=provider if _kind(name, provider) in ("efa", "socket") and provider else None,
            gdr=gdr.get(name),
        )
        for name, hosts in chosen.items()
    ]
    return tuple(sorted(found, key=lambda n: -len(n.hosts)))
