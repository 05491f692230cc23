"""Paths the user names for output (--out, --junit, init's folder), checked before any work, so a
bad one costs a line and exit 2, never a plan or a verdict."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from clusterctl.errors import PathError


def _refuse(code: int, path: Path, what: str) -> PathError:
    return PathError(OSError(code, os.strerror(code), str(path)), what)


def _nearest_existing(path: Path) -> Path:
    for folder in (path, *path.parents):
        if folder.exists() or folder.is_symlink():
            return folder
    return Path("/")


def writable_dir(path: Path, what: str) -> None:
    """`path` is, or can be made, a folder this user may write into."""
    found = _nearest_existing(path.absolute())
    if not found.is_dir():
        raise _refuse(errno.ENOTDIR, found, what)
    if not os.access(found, os.W_OK | os.X_OK):
        raise _refuse(errno.EACCES, found, what)


def writable_file(path: Path, what: str) -> None:
    """`path` names a file this user may create or replace."""
    if path.is_dir():
        raise _refuse(errno.EISDIR, path, what)
    if path.exists():
        if not os.access(path, os.W_OK):
            raise _refuse(errno.EACCES, path, what)
        return
    writable_dir(path.absolute().parent, what)
