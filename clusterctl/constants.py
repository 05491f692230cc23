"""Values with one home: the spec model's defaults, and what falls back on them where no spec is
at hand (a `--host` target, a launcher built in a test). Standard library only: every layer may
import it. clusterctl/power, copied to the nodes on its own, keeps a copy of DRAIN_PREFIX; a unit
test holds the two equal."""

DRAIN_PREFIX = "gpucl:"
"""The owner prefix of every drain reason the toolkit sets (healthChecks.drainPrefix)."""
NCCL_MIN_BYTES = "8"
NCCL_MAX_BYTES = "16G"
"""all_reduce_perf's sweep (validation.minBytes / maxBytes): 16G is where ND H100 v5's bus
bandwidth is flat (DESIGN.md's baseline)."""
