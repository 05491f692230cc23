"""GPU device stand-ins: real character devices (major 195, like /dev/nvidiaN).

Slurm's GRES code needs real device nodes for File=: with plain files CUDA_VISIBLE_DEVICES
comes out empty, and ConstrainDevices needs a major:minor to allow or deny.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

NVIDIA_MAJOR = 195


def gpu_paths(dev_dir: Path, count: int = 8) -> list[Path]:
    return [dev_dir / f"nvidia{i}" for i in range(count)]


def gpu_glob(dev_dir: Path, count: int = 8) -> str:
    return f"{dev_dir}/nvidia[0-{count - 1}]"


def make_gpu(path: Path, minor: int) -> None:
    if path.exists():
        path.unlink()
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(NVIDIA_MAJOR, minor))
