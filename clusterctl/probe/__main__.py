"""`python3 -m clusterctl.probe -b 1M -e 16M -f 2`: one rank per node under srun (or by hand with
SLURM_PROCID / SLURM_NTASKS / SLURM_JOB_NODELIST set); rank 0 prints an nccl-tests style table.

Exit status: 0 when the sweep ran (wrong results are reported in the table, not here), 3 when
the ring could not be formed or a peer stopped answering within --timeout.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import socket
import subprocess
import sys
import time
from array import array

from clusterctl.nccl import units
from clusterctl.probe import netinfo
from clusterctl.probe.ring import LANE, Ring, RingError, expand_hostlist, ring_allreduce

PATTERN = array("I", range(1, 252)).tobytes()  # lanes 1..251, repeated


def parse_size(text: str) -> int:
    """A size in clusterctl.nccl.units syntax, rounded down to whole lanes."""
    try:
        value = units.parse_size(text)
    except units.SizeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < LANE:
        raise argparse.ArgumentTypeError(f"size '{text}' is below {LANE} bytes")
    return value - value % LANE


def sizes(lo: int, hi: int, factor: int) -> list[int]:
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s = s * factor if factor > 1 else s + lo
    return out


def _scaled(base: bytes, k: int) -> bytes:
    n = len(base)
    return (int.from_bytes(base, "little") * k).to_bytes(n + 8, "little")[:n]


def count_wrong(got: bytes | bytearray, want: bytes) -> int:
    if got == want:
        return 0
    a, b = memoryview(got).cast("I"), memoryview(want).cast("I")
    return sum(1 for x, y in zip(a, b, strict=True) if x != y)


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m clusterctl.probe", description=__doc__)
    p.add_argument("-b", "--minbytes", type=parse_size, default=parse_size("1M"))
    p.add_argument("-e", "--maxbytes", type=parse_size, default=parse_size("16M"))
    p.add_argument("-f", "--stepfactor", type=int, default=2)
    p.add_argument("-n", "--iters", type=int, default=20)
    p.add_argument("-w", "--warmup_iters", type=int, default=5)
    p.add_argument("--port", type=int, default=None)
    p.add_argument("--master", default=os.environ.get("CLUSTERCTL_PROBE_MASTER"))
    p.add_argument("--bind", default=os.environ.get("CLUSTERCTL_PROBE_BIND", "0.0.0.0"))
    p.add_argument("--timeout", type=float, default=30.0, help="seconds any socket may wait")
    p.add_argument("--max-seconds", type=float, default=300.0, help="stop the sweep after this")
    p.add_argument("--corrupt-rank", type=int, default=None, help=argparse.SUPPRESS)
    env = os.environ.get
    ib, peermem = "CLUSTERCTL_PROBE_IB_DIR", "CLUSTERCTL_PROBE_PEERMEM_DIR"
    p.add_argument("--ib-dir", default=env(ib, netinfo.IB_DIR),
                   help="where the node lists its IB devices (as NCCL reads sysfs)")  # fmt: skip
    p.add_argument("--peermem-dir", default=env(peermem, netinfo.PEERMEM_DIR),
                   help="present when nvidia_peermem is loaded (GPUDirect RDMA)")  # fmt: skip
    return p.parse_args(argv)


def _env_int(*names: str, default: int) -> int:
    for name in names:
        if os.environ.get(name):
            return int(os.environ[name])
    return default


def address_of(name: str) -> str:
    """A node's address. For a Slurm node, the one slurmctld holds (NodeAddr, learned from the
    node's registration): on Azure a Slurm name (gpu-pg0-1) has no DNS record, the VM's
    computer name has. Anything that is not a Slurm node (--master HOST, no Slurm here) is
    resolved as usual."""
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        pass
    try:
        shown = subprocess.run(
            ["scontrol", "show", "node", "-o", name], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        shown = None
    found = re.search(r"(?:^| )NodeAddr=(\S+)", shown.stdout) if shown else None
    return socket.gethostbyname(found.group(1) if found else name)


def _master(args: argparse.Namespace) -> str:
    if args.master:
        return address_of(args.master)
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not nodelist:
        raise RingError("no --master and no SLURM_JOB_NODELIST: cannot find rank 0")
    return address_of(expand_hostlist(nodelist)[0])


def _interface_of(addr: str) -> str:
    """The interface holding `addr` (NCCL's OOB interface), from `ip -o -4 addr`."""
    try:
        shown = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True,
                               text=True, timeout=10).stdout  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return "eth0"
    for line in shown.splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[3].split("/")[0] == addr:
            return fields[1]
    return "eth0"


def _time_us(ring: Ring, data: bytes, iters: int, *, in_place: bool) -> float:
    if iters <= 0:
        return 0.0
    buf = bytearray(data)
    start = time.perf_counter()
    for _ in range(iters):
        out = ring_allreduce(ring, buf)
        if in_place:
            buf[:] = out  # values grow and wrap: fine for timing, checked separately
    return (time.perf_counter() - start) / iters * 1e6


def _agree_to_stop(ring: Ring, want_stop: bool) -> bool:
    flag = ring_allreduce(ring, (1 if want_stop else 0).to_bytes(LANE, "little"))
    return int.from_bytes(flag, "little") > 0


def run(args: argparse.Namespace) -> int:
    from clusterctl.nccl.emit import format_all_reduce, row_from_times

    rank = _env_int("SLURM_PROCID", "PMI_RANK", default=0)
    size = _env_int("SLURM_NTASKS", "SLURM_NPROCS", "PMI_SIZE", default=1)
    port = args.port or 29500 + _env_int("SLURM_JOB_ID", default=0) % 1000
    bind = args.bind
    me = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    addr = bind if bind != "0.0.0.0" else address_of(me)
    master = _master(args) if size > 1 else addr
    started = time.monotonic()
    ring = Ring.connect(rank, size, master, port, bind=addr, timeout=args.timeout, host=me)
    if size > 1:  # a network carries the ring: say which, as NCCL does on every rank
        hcas = netinfo.active_hcas(args.ib_dir)
        gdr = os.path.isdir(args.peermem_dir)
        oob = (_interface_of(addr), addr)
        lines = netinfo.info_lines(me.split(".")[0], rank, size, hcas, gdr, oob)
        lines += netinfo.env_lines(me.split(".")[0], os.environ)
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()
    rows, stopped, last = [], False, 0.0
    try:
        for nbytes in sizes(args.minbytes, args.maxbytes, args.stepfactor):
            elapsed = time.monotonic() - started
            over = elapsed + 2.5 * last > args.max_seconds
            if _agree_to_stop(ring, over):
                stopped = True
                break
            t0 = time.monotonic()
            base = (PATTERN * (nbytes // len(PATTERN) + 1))[:nbytes]
            mine = _scaled(base, rank + 1)
            if args.corrupt_rank == rank:
                mine = b"\xff\xff\x00\x00" + mine[LANE:]
            want = _scaled(base, size * (size + 1) // 2)
            wrong = count_wrong(ring_allreduce(ring, mine), want)
            _time_us(ring, mine, args.warmup_iters, in_place=False)
            oop = _time_us(ring, mine, args.iters, in_place=False)
            ip = _time_us(ring, mine, args.iters, in_place=True)
            rows.append(row_from_times(nbytes, oop, ip, n_ranks=size, dtype="uint32", wrong=wrong))
            last = time.monotonic() - t0
    finally:
        ring.close()
    if rank == 0:
        if not rows:
            print("# probe: no size finished within --max-seconds", file=sys.stderr)
            return 3
        text = format_all_reduce(
            rows, hosts=ring.hosts, gpu_name="tcp-probe", warmup_iters=args.warmup_iters,
            iters=args.iters, version="clusterctl-probe",
        )  # fmt: skip
        if stopped:
            text = (
                f"# probe stopped after {time.monotonic() - started:.1f} s (--max-seconds)\n" + text
            )
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    args.iters = max(1, args.iters)
    try:
        return run(args)
    except (RingError, OSError) as exc:
        print(f"probe: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
