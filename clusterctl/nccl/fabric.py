"""Which network NCCL chose, per host, read from its INFO lines (NCCL_DEBUG=INFO,
NCCL_DEBUG_SUBSYS=INIT,NET).

Every line is `host:pid:tid [dev] NCCL INFO ...`, so each one says which host it is about. NCCL
says `Using network IB` once per process (init.cc), after the transport's own line:
`NET/IB : Using [0]mlx5_ib0:1/IB [1]mlx5_ib1:1/IB ... [RO]; OOB eth0:10.0.0.4<0>` (the format
`"NET/IB : Using%s %s; OOB %s:%s"` with one ` [%d]%s:%d/%s` per device, NVIDIA/nccl
src/transport/net_ib.cc), `NET/IB : No device found.`, `NET/Socket : Using [0]eth0:10.0.0.4<0>`,
or the AWS plugin's `NET/OFI Selected Provider is efa (found 32 nics)` (aws/aws-ofi-nccl
`"Selected Provider is %s (found %d nics)"`, the NICs the provider offers on that host).
Channel lines say whether GPUDirect RDMA carried the data: `Channel 00/0 : 0[0] -> 8[0] [send]
via NET/IB/0/GDRDMA` (NVIDIA/nccl src/transport/net.cc `"... via NET/%s/%d%s%s%s"`: the device,
`/GDRDMA` when used, `(PCI)`, `/Shared`; through a PXN proxy the device is followed by `(rank)`).
A log without any of these (NCCL_DEBUG unset) proves nothing either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["HostFabric", "Network", "hosts_fabric", "networks_in"]

Kind = Literal["infiniband", "efa", "socket", "other"]

_INFO = re.compile(r"(?:^|\s)(?P<host>[\w.-]+)\s*:\d+:\d+\s+\[\d+\]\s+NCCL INFO\s+(?P<msg>.*)$")
_USING = re.compile(r"^Using network (?P<name>.+?)\s*$")
_NET_USING = re.compile(r"^NET/(?P<net>IB|Socket)\s*:\s*Using\s+(?P<devs>.*?)\s*(?:;\s*OOB.*)?$")
_IB_NONE = re.compile(r"^NET/IB\s*:\s*No device found")
_OFI_PROVIDER = re.compile(
    r"^NET/OFI Selected Provider is (?P<prov>[\w;-]+)(?:.*?\(found (?P<nics>\d+) nics?\))?", re.I
)
_VIA = re.compile(r"\bvia NET/(?P<net>[^/]+?)/\d+(?:\(\d+\))?(?P<gdr>/GDRDMA)?")
_DEVICE = re.compile(r"\[\d+\](?P<dev>[\w.-]+(?::\d+(?=/))?)")
# one IB device: `[3]mlx5_ib3:1/IB` (the SHARP plugin appends `/SHARP`; Ethernet ports say RoCE)
_IB_DEVICE = re.compile(r"\[\d+\](?P<name>[\w.-]+):(?P<port>\d+)/(?P<link>IB|RoCE)\b")


@dataclass(frozen=True)
class HostFabric:
    """What NCCL's INFO lines say about one host's network."""

    host: str
    network: str | None = None
    """As NCCL names it in `Using network X`: `IB`, `IBext_v8`, `Socket`, `AWS Libfabric`."""
    kind: Kind | None = None
    """None: the host's lines do not say which network NCCL chose."""
    devices: tuple[str, ...] = ()
    """The IB devices NCCL listed (`mlx5_ib0:1`), InfiniBand link layer only; sockets: the
    interfaces (`eth0`)."""
    other_devices: tuple[str, ...] = ()
    """Devices of another link layer in the same list (`mlx5_an0:1`, RoCE): not the fabric."""
    nics: int | None = None
    """The OFI plugin's `found N nics`."""
    provider: str | None = None
    net_channels: int = 0
    """Network channel lines (`via NET/...`) this host printed, each counted once."""
    gdr_channels: int = 0
    """Of those, the ones with `/GDRDMA`."""

    @property
    def device_count(self) -> int | None:
        """Fabric devices NCCL saw on this host: IB devices listed, or the OFI plugin's NICs."""
        if self.kind == "efa" or (self.nics is not None and not self.devices):
            return self.nics
        if self.kind == "infiniband" or self.devices:
            return len(self.devices)
        return None

    @property
    def gdr(self) -> bool | None:
        """Every network channel ran over GPUDirect RDMA (True), not all did (False), no
        channel lines (None)."""
        if not self.net_channels:
            return None
        return self.gdr_channels == self.net_channels

    @property
    def socket(self) -> bool:
        return self.kind == "socket"

    def describe(self) -> str:
        """`mlx5_ib0..7 (8 IB devices), GPUDirect RDMA 32/32 channels`."""
        parts = [self.network or "network not named"]
        if self.provider:
            parts.append(f"provider {self.provider}")
        n = self.device_count
        if n is not None:
            unit = {"infiniband": "IB devices", "efa": "EFA NICs"}.get(self.kind or "", "devices")
            parts.append(f"{_names(self.devices)} ({n} {unit})" if self.devices else f"{n} {unit}")
        if self.net_channels:
            what = "GPUDirect RDMA" if self.gdr else "no GPUDirect RDMA" if not self.gdr_channels \
                else "GPUDirect RDMA on some channels"  # fmt: skip
            parts.append(f"{what} ({self.gdr_channels}/{self.net_channels} channels)")
        return ", ".join(parts)


def _names(devices: tuple[str, ...]) -> str:
    """`mlx5_ib0..7` for a numbered run of names, else the names."""
    bare = [d.split(":")[0] for d in devices]
    m = [re.fullmatch(r"(?P<p>.*?)(?P<n>\d+)", b) for b in bare]
    if len(bare) > 2 and all(m) and len({x["p"] for x in m if x}) == 1:
        nums = sorted(int(x["n"]) for x in m if x)
        if nums == list(range(nums[0], nums[-1] + 1)):
            return f"{m[0]['p'] if m[0] else ''}{nums[0]}..{nums[-1]}"
    return ", ".join(bare)


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


@dataclass
class _Seen:
    network: str | None = None
    ib: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    ib_none: bool = False
    socket: list[str] = field(default_factory=list)
    provider: str | None = None
    nics: int | None = None
    channels: set[str] = field(default_factory=set)
    gdr: set[str] = field(default_factory=set)


def _read(seen: _Seen, msg: str) -> None:
    if u := _USING.match(msg):
        seen.network = u["name"]
    elif n := _NET_USING.match(msg):
        if n["net"] == "IB":
            for d in _IB_DEVICE.finditer(n["devs"]):
                into = seen.ib if d["link"] == "IB" else seen.other
                if (name := f"{d['name']}:{d['port']}") not in into:
                    into.append(name)
        else:
            seen.socket += [d for d in _DEVICE.findall(n["devs"]) if d not in seen.socket]
    elif _IB_NONE.match(msg):
        seen.ib_none = True
    elif p := _OFI_PROVIDER.match(msg):
        seen.provider = p["prov"]
        if p["nics"] is not None:
            seen.nics = int(p["nics"])
    elif (v := _VIA.search(msg)) and msg.startswith("Channel"):
        # the line itself, rank and direction included, so a repeated line counts once
        seen.channels.add(msg)
        if v["gdr"]:
            seen.gdr.add(msg)


def _host(host: str, s: _Seen) -> HostFabric:
    name = s.network
    if name is None:
        # NCCL before 2.6 printed no `Using network` line: the transport's own line says it
        name = "IB" if s.ib else "Socket" if s.socket else None
        if name is None and s.provider is not None:
            name = "AWS Libfabric"
    kind = _kind(name, s.provider) if name is not None else None
    devices = tuple(s.socket) if kind == "socket" and not s.ib else tuple(s.ib)
    return HostFabric(
        host=host,
        network=name,
        kind=kind,
        devices=devices,
        other_devices=tuple(s.other),
        nics=s.nics,
        provider=s.provider if kind in ("efa", "socket", "other") else None,
        net_channels=len(s.channels),
        gdr_channels=len(s.gdr),
    )


def hosts_fabric(lines: Iterable[str]) -> tuple[HostFabric, ...]:
    """Per host, in order of first appearance, what its NCCL INFO lines say about the network;
    () when no line does. Lines must be free of launcher prefixes (parse.strip_prefixes)."""
    seen: dict[str, _Seen] = {}
    for line in lines:
        m = _INFO.search(line)
        if m is None:
            continue
        msg = m["msg"].strip()
        before = seen.get(m["host"])
        s = before or _Seen()
        _read(s, msg)
        if before is None and s != _Seen():
            seen[m["host"]] = s
    return tuple(_host(h, s) for h, s in seen.items() if s.network or _says_network(s))


def _says_network(s: _Seen) -> bool:
    return bool(s.ib or s.socket or s.provider or s.channels or s.ib_none)


def networks_in(lines: Iterable[str]) -> tuple[Network, ...]:
    """The networks NCCL's INFO lines name, most hosts first; () when the log names none."""
    return networks_of(hosts_fabric(lines))


def networks_of(hosts: Iterable[HostFabric]) -> tuple[Network, ...]:
    """The hosts grouped by the network NCCL chose on each."""
    groups: dict[tuple[str, Kind], list[HostFabric]] = {}
    for h in hosts:
        if h.network is None or h.kind is None:
            continue
        groups.setdefault((h.network, h.kind), []).append(h)
    found = []
    for (name, kind), members in groups.items():
        devices: list[str] = []
        for h in members:
            devices += [d for d in h.devices if d not in devices]
        channels = sum(h.net_channels for h in members)
        found.append(
            Network(
                name=name,
                kind=kind,
                hosts=tuple(h.host for h in members),
                devices=tuple(devices),
                provider=next((h.provider for h in members if h.provider), None),
                gdr=None if not channels else any(h.gdr_channels for h in members),
            )
        )
    return tuple(sorted(found, key=lambda n: -len(n.hosts)))
