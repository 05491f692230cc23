"""Writes the derived_*.txt samples (which network NCCL used) from genuine logs.

Each is a genuine all_reduce_perf log with NCCL INFO lines added where NCCL prints them (after
the `NCCL version` line, before the result table), in the formats NCCL and aws-ofi-nccl print
(see SOURCES.md for the logs they were taken from). The socket samples also slow every row down
to what a TCP fallback delivers.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROW = re.compile(r"^(?P<pre>)(?P<head>\s*\d+\s+\d+\s+\S+\s+\S+\s+-?\d+)(?P<rest>.*)$")
AZURE_HOSTS = ("bm-h100-01", "bm-h100-02")
AWS_HOSTS = ("ip-10-1-18-77", "ip-10-1-45-213")
IB = " ".join(f"[{i}]mlx5_ib{i}:1/IB" for i in range(8))


def info(host: str, pid: int, dev: int, msg: str) -> str:
    return f"{host}:{pid}:{pid + 40} [{dev}] NCCL INFO {msg}"


def ib_lines(host: str, pid: int, ip: str) -> list[str]:
    return [
        info(host, pid, 0, f"Bootstrap : Using eth0:{ip}<0>"),
        info(host, pid, 0, "cudaDriverVersion 12080"),
        info(host, pid, 0, f"NET/IB : Using {IB} [RO]; OOB eth0:{ip}<0>"),
        info(host, pid, 0, "Using network IB"),
        info(host, pid, 0, "Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA"),
        info(host, pid, 0, "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA"),
    ]


def socket_lines(host: str, pid: int, ip: str) -> list[str]:
    return [
        info(host, pid, 0, f"Bootstrap : Using eth0:{ip}<0>"),
        info(host, pid, 0, "cudaDriverVersion 12080"),
        info(host, pid, 0, "NET/IB : No device found."),
        info(host, pid, 0, f"NET/Socket : Using [0]eth0:{ip}<0>"),
        info(host, pid, 0, "Using network Socket"),
        info(host, pid, 0, "Channel 00/0 : 8[0] -> 0[0] [receive] via NET/Socket/0"),
    ]


def ofi_lines(host: str, pid: int, provider: str) -> list[str]:
    via = "via NET/AWS Libfabric/0" + ("/GDRDMA" if provider.startswith("efa") else "")
    return [
        info(host, pid, 0, "NET/OFI Initializing aws-ofi-nccl 1.9.1-aws"),
        info(host, pid, 0, "NET/OFI Using Libfabric version 1.19"),
        info(host, pid, 0, f"NET/OFI Selected Provider is {provider} (found 32 nics)"),
        info(host, pid, 0, "Using network AWS Libfabric"),
        info(host, pid, 0, f"Channel 00/0 : 8[0] -> 0[0] [receive] {via}"),
    ]


def slowed(text: str, factor: float) -> str:
    """Every row `factor` times slower: time x factor, algbw and busbw / factor."""
    out = []
    for line in text.splitlines():
        m = ROW.match(line)
        if avg := re.match(r"^(.*# Avg bus bandwidth\s*:\s*)(\S+)", line):
            out.append(f"{avg[1]}{float(avg[2]) / factor:g}")
            continue
        if not m:
            out.append(line)
            continue
        fields = m["rest"].split()
        for side in (0, 4):
            t, alg, bus = (float(x) for x in fields[side : side + 3])
            slow = f"{t * factor:.1f}" if t * factor < 1e5 else f"{t * factor:.0f}"
            fields[side : side + 3] = [slow, f"{alg / factor:.2f}", f"{bus / factor:.2f}"]
        out.append(m["pre"] + m["head"] + "".join(f"  {f:>6}" for f in fields))
    return "\n".join(out) + "\n"


def insert_after(text: str, marker: str, lines: list[str]) -> str:
    head, sep, tail = text.partition(marker)
    assert sep, marker
    first, nl, rest = tail.partition("\n")
    return head + sep + first + nl + "\n".join(lines) + "\n" + rest


def main() -> None:
    azure = (HERE / "nccl_tests_issue309_h100_2node.txt").read_text()
    ips = ("10.0.0.4", "10.0.0.5")
    ib = [
        x
        for h, ip, pid in zip(AZURE_HOSTS, ips, (29262, 26633), strict=True)
        for x in ib_lines(h, pid, ip)
    ]
    (HERE / "derived_azure_ib_gdr.txt").write_text(insert_after(azure, "NCCL version", ib))
    sock = [
        x
        for h, ip, pid in zip(AZURE_HOSTS, ips, (29262, 26633), strict=True)
        for x in socket_lines(h, pid, ip)
    ]
    (HERE / "derived_azure_socket_fallback.txt").write_text(
        slowed(insert_after(azure, "NCCL version", sock), 100.0)
    )
    aws = azure
    for azure_host, aws_host in zip(AZURE_HOSTS, AWS_HOSTS, strict=True):
        aws = aws.replace(azure_host, aws_host)
    for name, provider, factor in (("efa", "efa", 1.0), ("ofi_tcp", "tcp;ofi_rxm", 50.0)):
        lines = [
            x
            for h, pid in zip(AWS_HOSTS, (29262, 26633), strict=True)
            for x in ofi_lines(h, pid, provider)
        ]
        text = insert_after(aws, "NCCL version", lines)
        (HERE / f"derived_aws_{name}.txt").write_text(slowed(text, factor))


if __name__ == "__main__":
    main()
