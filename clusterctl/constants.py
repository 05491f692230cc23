"""Values with one home: the spec model's defaults, and what falls back on them where no spec is
at hand (a `--host` target, a launcher built in a test). Standard library only: every layer may
import it. clusterctl/power, copied to the nodes on its own, keeps a copy of DRAIN_PREFIX; a unit
test holds the two equal."""

STACK_TAG = "gpu-clusters:stack"
CLUSTER_TAG = "gpu-clusters:cluster"
"""The tags every cloud resource carries (clusterctl/spec/tags.py), so teardown can prove it left
nothing: `down` asks each cloud for what still carries STACK_TAG."""

DRAIN_PREFIX = "gpucl:"
"""The owner prefix of every drain reason the toolkit sets (healthChecks.drainPrefix)."""
NCCL_MIN_BYTES = "8"
NCCL_MAX_BYTES = "16G"
"""all_reduce_perf's sweep (validation.minBytes / maxBytes): 16G is where ND H100 v5's bus
bandwidth is flat (DESIGN.md's baseline)."""

SERVICE_IDS = {"slurm": 11100, "munge": 11101}
"""Fixed uid/gid of the service users on every node (the image has none: Microsoft's Slurm packages
create no user), so files on the shared /sched keep their owner across nodes."""
TEAM_ADMIN_GROUP = "gpucl-admins"
"""The group of the team's admins (users[].admin): sudo without a password on every node (team
users have no password; they log in with their keys). A system group of each node's own: it owns
no shared file, so its gid need not agree (a fixed one met the admin user's, which useradd
allocates after the service ids)."""

# Exit codes of the commands that give a verdict (validate, nodes): CI tells a wrong command line
# from a run that proved nothing. 2 is what click (and so typer) gives any usage error.
EXIT_FAIL = 1
EXIT_USAGE = 2
"""The command was given wrong: a flag, a value, a file, a stack; fix it and run again."""
EXIT_INCONCLUSIVE = 3
"""It ran but proved nothing: unreachable, did not start, an incomplete log, nothing judged."""
