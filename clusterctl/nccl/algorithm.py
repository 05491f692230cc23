"""Which all_reduce algorithm a run was told to use, as its NCCL INFO lines say.

NCCL says it only when the variable is set: `NCCL INFO NCCL_ALGO set by environment to Ring`
(NVIDIA/nccl src/graph/tuning.cc, `INFO(NCCL_ENV, "NCCL_ALGO set by environment to %s", ...)`,
printed by every rank; a value from /etc/nccl.conf is exported first and reads the same). The
line belongs to the ENV subsystem: NCCL 2.19+ prints it with NCCL_DEBUG=INFO and the default
subsystems (INIT,BOOTSTRAP,ENV, src/debug.cc), older releases and any NCCL_DEBUG_SUBSYS without
ENV do not. So:

- the line is there: the run used that value (`Ring`, or a list such as `ring,tree`);
- no such line, but other `... set by environment to ...` lines are (the ENV subsystem was on
  and would have printed it): NCCL_ALGO was unset, the run used NCCL's own choice (`default`);
- neither: the log does not say (None). A log that says nothing is not taken for either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["DEFAULT", "RING", "algorithm_in", "label"]

RING = "Ring"
DEFAULT = "default"
"""NCCL_ALGO unset: NCCL picks per message size (NVLS, NVLS-Tree, Tree, CollNet/SHARP, Ring)."""

_SET = re.compile(r"NCCL INFO\s+(?P<var>NCCL_\w+) set by environment to (?P<value>\S+?)\.?\s*$")


def algorithm_in(lines: Iterable[str]) -> str | None:
    """`Ring` (NCCL_ALGO=ring in any case), the value as NCCL printed it (`Tree`, `ring,tree`),
    `default` (ENV lines, none for NCCL_ALGO), or None (the log does not say)."""
    env_on = False
    for line in lines:
        if m := _SET.search(line):
            if m["var"] == "NCCL_ALGO":
                value = m["value"]
                return RING if value.lower() == "ring" else value
            env_on = True
    return DEFAULT if env_on else None


def label(algorithm: str | None) -> str:
    """How a person reads it: `NCCL_ALGO=Ring`, `NCCL's default algorithm (NCCL_ALGO unset)`."""
    if algorithm is None:
        return "algorithm not shown in the log"
    if algorithm == DEFAULT:
        return "NCCL's default algorithm (NCCL_ALGO unset)"
    return f"NCCL_ALGO={algorithm}"
