"""ssh's ProxyCommand into the lab: stdin/stdout <-> a TCP connection to HOST PORT (stdlib only).

Run by path inside the lab's network namespace (`nsenter --net=... python3 -I relay.py %h %p`):
the host has no route to the lab, as a laptop has none to a VNet without a bastion.
"""

from __future__ import annotations

import os
import socket
import sys
import threading


def main() -> int:
    host, port = sys.argv[1], int(sys.argv[2])
    conn = socket.create_connection((host, port), timeout=10)
    conn.settimeout(None)

    def upstream() -> None:
        while data := os.read(0, 65536):
            conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, daemon=True).start()
    while data := conn.recv(65536):
        os.write(1, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
