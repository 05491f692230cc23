"""A ring of TCP connections between ranks and a ring all-reduce over it.

Rendezvous: rank 0 listens on (master, port); every rank opens its own listener, tells rank 0
where it is, rank 0 sends back the table, then each rank connects to its right neighbour and
accepts its left one. Every socket has a timeout, so a dead or stuck peer raises, never hangs.

Data are uint32 lanes with values far below 2**32, added lane-wise as one big Python integer
(int.from_bytes): carries never cross a lane while sum < 2**32, and the add runs at C speed.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
from dataclasses import dataclass

__all__ = ["Ring", "RingError", "expand_hostlist", "ring_allreduce"]

LANE = 4  # bytes per uint32 element


class RingError(RuntimeError):
    pass


def expand_hostlist(text: str) -> list[str]:
    """Slurm hostlist `node[1-3,7],gpu-a[01-02]` -> names (what `scontrol show hostnames` does)."""
    names: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", part)
        if not m:
            names.append(part)
            continue
        prefix, ranges, suffix = m.groups()
        for item in ranges.split(","):
            lo, _, hi = item.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                names.append(f"{prefix}{i:0{len(lo)}d}{suffix}")
    return names


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise RingError("peer closed the connection")
        got += k
    return buf


def _send_msg(sock: socket.socket, obj: object) -> None:
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack("!I", len(data)) + data)


def _recv_msg(sock: socket.socket) -> object:
    (n,) = struct.unpack("!I", _recv_exact(sock, 4))
    return json.loads(_recv_exact(sock, n))


def _listener(addr: str, port: int, timeout: float) -> socket.socket:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(64)
    srv.settimeout(timeout)
    return srv


def _tune(sock: socket.socket, timeout: float) -> socket.socket:
    sock.settimeout(timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _connect(addr: str, port: int, timeout: float, attempts_until: float) -> socket.socket:
    import time

    while True:
        try:
            return _tune(socket.create_connection((addr, port), timeout=timeout), timeout)
        except OSError as exc:
            if time.monotonic() > attempts_until:
                raise RingError(f"cannot reach {addr}:{port}: {exc}") from exc
            time.sleep(0.1)


@dataclass
class Ring:
    rank: int
    size: int
    hosts: list[str]  # hostname of every rank, in rank order
    right: socket.socket | None
    left: socket.socket | None

    @classmethod
    def connect(
        cls,
        rank: int,
        size: int,
        master: str,
        port: int,
        *,
        bind: str,
        timeout: float,
        host: str | None = None,
    ) -> Ring:
        import time

        hostname = host or socket.gethostname()
        if size == 1:
            return cls(rank, size, [hostname], None, None)
        until = time.monotonic() + timeout
        own = _listener(bind, 0, timeout)
        me = {"rank": rank, "addr": bind, "port": own.getsockname()[1], "host": hostname}
        try:
            if rank == 0:
                root = _listener(bind, port, timeout)
                table: list[dict] = [me]
                try:
                    peers = []
                    while len(table) < size:
                        conn, _ = root.accept()
                        _tune(conn, timeout)
                        info = _recv_msg(conn)
                        assert isinstance(info, dict)
                        table.append(info)
                        peers.append(conn)
                except TimeoutError as exc:
                    raise RingError(
                        f"rank 0: only {len(table)}/{size} ranks arrived in {timeout:g} s"
                    ) from exc
                finally:
                    root.close()
                table.sort(key=lambda e: e["rank"])
                for conn in peers:
                    _send_msg(conn, table)
                    conn.close()
            else:
                conn = _connect(master, port, timeout, until)
                _send_msg(conn, me)
                table = _recv_msg(conn)  # type: ignore[assignment]
                conn.close()
            nxt = table[(rank + 1) % size]
            right = _connect(nxt["addr"], nxt["port"], timeout, until)
            try:
                left, _ = own.accept()
            except TimeoutError as exc:
                raise RingError(f"rank {rank}: left neighbour never connected") from exc
            _tune(left, timeout)
        finally:
            own.close()
        return cls(rank, size, [e["host"] for e in table], right, left)

    def close(self) -> None:
        for s in (self.right, self.left):
            if s is not None:
                s.close()

    def exchange(self, out: bytes | memoryview, nbytes: int) -> bytearray:
        """Send `out` to the right while receiving `nbytes` from the left."""
        assert self.right is not None and self.left is not None
        failed: list[BaseException] = []

        def send() -> None:
            try:
                self.right.sendall(out)  # type: ignore[union-attr]
            except BaseException as exc:  # re-raised in the caller's thread
                failed.append(exc)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        try:
            data = _recv_exact(self.left, nbytes)
        except TimeoutError as exc:
            raise RingError(f"rank {self.rank}: receive from the left timed out") from exc
        sender.join()
        if failed:
            raise RingError(f"rank {self.rank}: send failed: {failed[0]}")
        return data


def _chunks(nbytes: int, parts: int) -> list[tuple[int, int]]:
    lanes = nbytes // LANE
    bounds = [lanes * i // parts * LANE for i in range(parts + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]


def _add(a: bytes | bytearray, b: bytes | bytearray) -> bytes:
    n = len(a)
    total = int.from_bytes(a, "little") + int.from_bytes(b, "little")
    return total.to_bytes(n + 1, "little")[:n]


def ring_allreduce(ring: Ring, data: bytes | bytearray) -> bytearray:
    """Sum of every rank's `data` (uint32 lanes): reduce-scatter, then all-gather."""
    n = ring.size
    out = bytearray(data)
    if n == 1:
        return out
    spans = _chunks(len(data), n)
    r = ring.rank
    for step in range(n - 1):
        s_lo, s_hi = spans[(r - step) % n]
        d_lo, d_hi = spans[(r - step - 1) % n]
        got = ring.exchange(memoryview(out)[s_lo:s_hi], d_hi - d_lo)
        out[d_lo:d_hi] = _add(out[d_lo:d_hi], got)
    for step in range(n - 1):
        s_lo, s_hi = spans[(r + 1 - step) % n]
        d_lo, d_hi = spans[(r - step) % n]
        out[d_lo:d_hi] = ring.exchange(memoryview(out)[s_lo:s_hi], d_hi - d_lo)
    return out
