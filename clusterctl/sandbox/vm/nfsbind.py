"""Attach a directory of one node's filesystem tree at a path inside another node (stdlib + ctypes).

The NFS stand-in's server side: the host (the lab server) runs this, single-threaded, as

    python3 nfsbind.py <server PID 1> <export path> <client PID 1> <mount point>

setns(2) enters the server's mount namespace, where open_tree(2) clones the mount tree under the
export (as the server sees it: e.g. its xfs data disk under /shared; the kernel clones only mounts
of the caller's own namespace), setns(2) enters the client's, move_mount(2) attaches the clone.
"""

from __future__ import annotations

import ctypes
import os
import sys

SYS_OPEN_TREE = 428  # x86_64
SYS_MOVE_MOUNT = 429
OPEN_TREE_CLONE = 1
AT_RECURSIVE = 0x8000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
AT_FDCWD = -100
CLONE_NEWNS = 0x00020000


def _enter(libc: ctypes.CDLL, pid: int) -> None:
    ns = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY)
    if libc.setns(ns, CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), f"setns into the mount namespace of {pid}")
    os.close(ns)


def attach(server_pid: int, source: str, client_pid: int, target: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    client_ns = os.open(
        f"/proc/{client_pid}/ns/mnt", os.O_RDONLY
    )  # before leaving the host's /proc
    _enter(libc, server_pid)
    fd = libc.syscall(
        SYS_OPEN_TREE, AT_FDCWD, source.encode(), OPEN_TREE_CLONE | AT_RECURSIVE | os.O_CLOEXEC
    )
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"open_tree {source}")
    if libc.setns(client_ns, CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "setns into the client's mount namespace")
    rc = libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY_PATH)
    if rc != 0:
        raise OSError(ctypes.get_errno(), f"move_mount to {target}")


def main(argv: list[str]) -> int:
    server, source, client, target = argv
    try:
        attach(int(server), source, int(client), target)
    except OSError as e:
        print(f"nfsbind: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
