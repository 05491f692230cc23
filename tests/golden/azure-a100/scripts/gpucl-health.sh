#!/bin/bash
# gpucl-health: Slurm's HealthCheckProgram on every node (rendered by gpu-clusters).
# Runs the node's checks. A failure drains this node with the reason "gpucl: <what failed>".
# When the checks pass again, the node is resumed only if its drain reason carries that prefix:
# a drain an admin set by hand (any other reason) is never touched.
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

if [ "$status" -ne 0 ]; then
  detail=$(printf '%s\n' "$output" | grep -v '^[[:space:]]*$' | tail -n 1 | tr -s '[:space:]' ' ' | cut -c 1-180)
  [ -n "$detail" ] || detail="health check exited $status"
  case "$reason" in
    "$prefix"*) exit 0 ;;   # already drained by us; keep the first reason
  esac
  scontrol update nodename="$node" state=drain reason="$prefix $detail"
  logger -t gpucl-health "drained $node: $detail" 2>/dev/null || true
  exit 0
fi

case "$state" in
  *drain* | *DRAIN*)
    case "$reason" in
      "$prefix"*)
        scontrol update nodename="$node" state=resume
        logger -t gpucl-health "resumed $node (checks pass again)" 2>/dev/null || true
        ;;
    esac
    ;;
esac
exit 0
