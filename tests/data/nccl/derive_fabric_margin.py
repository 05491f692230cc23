"""Two-node logs for acceptance at the margin (each host's fabric), built from a genuine
all_reduce_perf log.

`ib_log` and `efa_log` take the genuine 2 x 8 H100 run of NVIDIA/nccl-tests issue 309, rename its
hosts, scale every row so the 16 GiB in-place busbw is the figure asked for (time x f, algbw and
busbw / f, as derive_transport.slowed does), and add each host's NCCL INFO lines in the formats
NCCL 2.18-2.26 and aws-ofi-nccl print them:

- `NET/IB : Using [0]mlx5_ib0:1/IB ... [RO]; OOB eth0:10.0.0.4<0>` (NVIDIA/nccl
  src/transport/net_ib.cc: `"NET/IB : Using%s %s; OOB %s:%s"`, one ` [%d]%s:%d/%s` per device),
- `Using network IB` (src/init.cc),
- `Channel 03/0 : 11[3] -> 3[3] [receive] via NET/IB/3/GDRDMA` (src/transport/net.cc:
  `"Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s"`; `/GDRDMA` only when
  GPUDirect RDMA is used; through a PXN proxy `NET/IB/3(11)/GDRDMA`),
- `NET/OFI Selected Provider is efa (found 32 nics)` (aws/aws-ofi-nccl
  `"Selected Provider is %s (found %d nics)"`; NVIDIA/nccl issue 1597 shows `found 16 nics` on
  p5en) and `Using network AWS Libfabric`, channels `via NET/AWS Libfabric/3/GDRDMA`.

Every local rank (one process per GPU) prints its own lines, as NCCL does. Device names on Azure
are Azure/azurehpc-health-checks' (`mlx5_ib0`..7); host names and addresses are made up.
Run this file to rewrite the `derived_*.txt` samples the CLI tests read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
GENUINE = HERE / "nccl_tests_issue309_h100_2node.txt"
GENUINE_HOSTS = ("bm-h100-01", "bm-h100-02")
GENUINE_PIDS = (29262, 26633)
GENUINE_TOP = 469.10  # the genuine run's in-place busbw at 16 GiB
ROW = re.compile(r"^(?P<head>\s*\d+\s+\d+\s+\S+\s+\S+\s+-?\d+)(?P<rest>.*)$")


def _info(host: str, pid: int, dev: int, msg: str) -> str:
    return f"{host}:{pid}:{pid + 64} [{dev}] NCCL INFO {msg}"


def scaled(text: str, busbw_16g: float) -> str:
    """Every row scaled so that the 16 GiB in-place busbw reads `busbw_16g`."""
    factor = GENUINE_TOP / busbw_16g
    out = []
    for line in text.splitlines():
        if avg := re.match(r"^(.*# Avg bus bandwidth\s*:\s*)(\S+)", line):
            out.append(f"{avg[1]}{float(avg[2]) / factor:.2f}")
            continue
        m = ROW.match(line)
        if not m:
            out.append(line)
            continue
        fields = m["rest"].split()
        for side in (0, 4):
            t, alg, bus = (float(x) for x in fields[side : side + 3])
            fields[side : side + 3] = [
                f"{t * factor:.1f}",
                f"{alg / factor:.2f}",
                f"{bus / factor:.2f}",
            ]
        out.append(m["head"] + "".join(f"  {f:>6}" for f in fields))
    return "\n".join(out) + "\n"


def _base(hosts: Sequence[str], busbw: float) -> str:
    text = GENUINE.read_text()
    for old, new in zip(GENUINE_HOSTS, hosts, strict=True):
        text = text.replace(old, new)
    return scaled(text, busbw)


def _insert(text: str, lines: list[str]) -> str:
    head, sep, tail = text.partition("NCCL version")
    first, nl, rest = tail.partition("\n")
    return head + sep + first + nl + "\n".join(lines) + "\n" + rest


def _channels(
    host_index: int, local: int, net: str, gdr: bool, pxn: bool = False
) -> list[tuple[int, str]]:
    """(device, message) for one rank's two network channels of a 2-node ring."""
    me = host_index * 8 + local
    peer = (1 - host_index) * 8 + local
    dev = f"{local}({me})" if pxn else f"{local}"
    tail = "/GDRDMA" if gdr else ""
    return [
        (local, f"Channel {local:02d}/0 : {peer}[{local}] -> {me}[{local}] [receive] "
                f"via NET/{net}/{dev}{tail}"),
        (local, f"Channel {local + 8:02d}/0 : {me}[{local}] -> {peer}[{local}] [send] "
                f"via NET/{net}/{dev}{tail}"),
    ]  # fmt: skip


def ib_log(
    busbw: float,
    *,
    hosts: Sequence[str] = ("h100-0", "h100-1"),
    devices: Mapping[str, Sequence[int]] | None = None,
    gdr: Mapping[str, bool] | None = None,
    roce: bool = False,
    pxn: bool = False,
    socket: Sequence[str] = (),
) -> str:
    """A 2-node ND H100 v5 log: each host lists mlx5_ib<i> for i in `devices[host]` (all 8 by
    default), runs its channels with GPUDirect RDMA unless `gdr[host]` is False; `roce` adds
    the Ethernet VF (mlx5_an0, RoCE) to the list; `socket` hosts fell back to sockets."""
    lines = []
    for h, host in enumerate(hosts):
        pid = GENUINE_PIDS[h]
        ip = f"10.0.0.{4 + h}"
        for local in range(8):
            p = pid + local
            if host in socket:
                lines += [
                    _info(host, p, local, "NET/IB : No device found."),
                    _info(host, p, local, f"NET/Socket : Using [0]eth0:{ip}<0>"),
                    _info(host, p, local, "Using network Socket"),
                ]
                lines += [_info(host, p, d, m) for d, m in _channels(h, local, "Socket", False)]
                continue
            idx = list((devices or {}).get(host, range(8)))
            listed = "".join(f" [{n}]mlx5_ib{i}:1/IB" for n, i in enumerate(idx))
            if roce:
                listed += f" [{len(idx)}]mlx5_an0:1/RoCE"
            lines += [
                _info(host, p, local, f"NET/IB : Using{listed} [RO]; OOB eth0:{ip}<0>"),
                _info(host, p, local, "Using network IB"),
            ]
            use_gdr = (gdr or {}).get(host, True)
            lines += [_info(host, p, d, m) for d, m in _channels(h, local, "IB", use_gdr, pxn)]
    return _insert(_base(hosts, busbw), lines)


def efa_log(
    busbw: float,
    *,
    hosts: Sequence[str] = ("ip-10-1-18-77", "ip-10-1-45-213"),
    nics: Mapping[str, int] | None = None,
    gdr: Mapping[str, bool] | None = None,
    provider: Mapping[str, str] | None = None,
    network: str = "AWS Libfabric",
) -> str:
    """A 2-node p5 log through aws-ofi-nccl: `found N nics` per host (32 by default)."""
    lines = []
    for h, host in enumerate(hosts):
        for local in range(8):
            p = GENUINE_PIDS[h] + local
            prov = (provider or {}).get(host, "efa")
            lines += [
                _info(host, p, local, "NET/OFI Initializing aws-ofi-nccl 1.9.1-aws"),
                _info(host, p, local, "NET/OFI Using Libfabric version 1.19"),
                _info(host, p, local, f"NET/OFI Selected Provider is {prov} "
                                      f"(found {(nics or {}).get(host, 32)} nics)"),
                _info(host, p, local, f"Using network {network}"),
            ]  # fmt: skip
            use_gdr = (gdr or {}).get(host, True) and prov == "efa"
            lines += [_info(host, p, d, m) for d, m in _channels(h, local, network, use_gdr)]
    return _insert(_base(hosts, busbw), lines)


SAMPLES = {
    "derived_h100_healthy.txt": lambda: ib_log(381.4),
    "derived_h100_7_of_8_ib.txt": lambda: ib_log(338.0, devices={"h100-1": [0, 1, 2, 3, 4, 6, 7]}),
    "derived_h100_no_gdr.txt": lambda: ib_log(318.0, gdr={"h100-1": False}),
    "derived_h100_12pct_low.txt": lambda: ib_log(336.0),
    "derived_p5_healthy.txt": lambda: efa_log(368.5),
    "derived_p5_31_nics.txt": lambda: efa_log(360.0, nics={"ip-10-1-45-213": 31}),
}


def main() -> None:
    for name, make in SAMPLES.items():
        (HERE / name).write_text(make())


if __name__ == "__main__":
    main()
