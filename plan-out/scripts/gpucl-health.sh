#!/bin/bash
# gpucl-health: Slurm's HealthCheckProgram on every node (rendered by gpu-clusters).
# Runs the node's checks. A failure drains this node with the reason "gpucl: <what failed>".
# When the checks pass again, the node is resumed only if it is drained with that prefix. A drain
# anyone else set (an admin's, any other reason) is never touched: not re-drained, not resumed.
set -u

conf=${GPUCL_HEALTH_ENV:-/etc/gpu-clusters/health.env}
if [ -r "$conf" ]; then
  # shellcheck source=/dev/null
  . "$conf"
fi
prefix=${DRAIN_PREFIX:-gpucl:}
node=${SLURMD_NODENAME:-$(hostname -s)}
check_cmd=${CHECK_CMD:-/usr/sbin/nhc}
slurm_bin=${SLURM_BIN:-}

scontrol() { command "${slurm_bin}scontrol" "$@"; }
sinfo() { command "${slurm_bin}sinfo" "$@"; }

output=$($check_cmd 2>&1)
status=$?
reason=$(sinfo -h -N -n "$node" -o '%E' 2>/dev/null | head -n 1)
state=$(sinfo -h -N -n "$node" -o '%T' 2>/dev/null | head -n 1)

# Decide from the state first: Slurm 23.11-25.11 without accounting keeps the old reason after a
# resume, so a reason with our prefix on a node that is not drained is stale, not a drain of ours.
drained=false
case "$state" in *drain* | *DRAIN*) drained=true ;; esac
ours=false
case "$reason" in "$prefix"*) ours=true ;; esac
# A resize drains the nodes it removes and waits for them to be idle: never lift that drain.
case "$reason" in "$prefix resize:"*) ours=false ;; esac

if [ "$status" -ne 0 ]; then
  # Drained already: by us (keep the first reason) or by someone else (never touch theirs).
  [ "$drained" = true ] && exit 0
  detail=$(printf '%s\n' "$output" | grep -v '^[[:space:]]*$' | tail -n 1 | tr -s '[:space:]' ' ' | cut -c 1-180)
  [ -n "$detail" ] || detail="health check exited $status"
  scontrol update nodename="$node" state=drain reason="$prefix $detail"
  logger -t gpucl-health "drained $node: $detail" 2>/dev/null || true
  exit 0
fi

if [ "$drained" = true ] && [ "$ours" = true ]; then
  scontrol update nodename="$node" state=resume
  logger -t gpucl-health "resumed $node (checks pass again)" 2>/dev/null || true
fi
exit 0
