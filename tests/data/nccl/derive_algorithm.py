"""Two-node logs that say which all_reduce algorithm ran, the way NCCL says it.

Built on derive_fabric_margin's `ib_log` / `efa_log` (the genuine 2 x 8 H100 run of
NVIDIA/nccl-tests issue 309, rescaled, with each host's INIT/NET lines). `with_env` adds what every
rank prints with the ENV subsystem on (NCCL_DEBUG_SUBSYS=...,ENV, or NCCL 2.19+'s default
subsystems), after its `Using network` line:

- an integer parameter, with a full stop: `NCCL_IB_PCI_RELAXED_ORDERING set by environment to
  1.` (NVIDIA/nccl's NCCL_PARAM loader; published logs show e.g. `NCCL INFO NCCL_IB_DISABLE set by
  environment to 1.`, `NCCL INFO NCCL_CROSS_NIC set by environment to 1.`);
- where `algo` is given, `NCCL_ALGO set by environment to <algo>` (src/graph/tuning.cc
  `"NCCL_ALGO set by environment to %s"`, no full stop; a published p5 log reads `NCCL INFO
  NCCL_ALGO set by environment to ring,tree`).

With `algo=None` the ENV lines are there and the NCCL_ALGO line is not: NCCL_ALGO was unset.
"""

from __future__ import annotations

import re

_USING = re.compile(r"^(?P<prefix>\S+ \[\d+\]) NCCL INFO Using network ")


def with_env(text: str, algo: str | None, *, param: str = "NCCL_IB_PCI_RELAXED_ORDERING") -> str:
    out = []
    for line in text.splitlines():
        out.append(line)
        if m := _USING.match(line):
            out.append(f"{m['prefix']} NCCL INFO {param} set by environment to 1.")
            if algo is not None:
                out.append(f"{m['prefix']} NCCL INFO NCCL_ALGO set by environment to {algo}")
    return "\n".join(out) + "\n"
