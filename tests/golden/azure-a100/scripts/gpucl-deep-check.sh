#!/bin/bash
# gpucl-deep-check: the deep health tier on this node, run by the scheduler's gpucl-deep-health
# as an exclusive Slurm job, so it never runs beside a job. Azure's own runner (azurehpc-health-
# checks on the HPC image; it exits 1 when a check fails, as Azure/az-hop's cluster-init health
# check reads it) runs /etc/nhc/gpucl-deep.conf within 1800 s. A failure drains the node
# with "gpucl-deep: <what failed>", a reason the fast tier never resumes; an admin (scontrol
# ... State=RESUME) or `clusterctl node replace` returns it. A drain someone else set stays theirs.
set -u
node=${SLURMD_NODENAME:-$(hostname -s)}
runner=${GPUCL_DEEP_RUNNER:-/opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh}
if [ ! -x "$runner" ]; then
  echo "gpucl-deep: $runner not found; the Azure HPC image ships azurehpc-health-checks there"
  exit 2
fi
output=$(timeout 1800 "$runner" -c /etc/nhc/gpucl-deep.conf 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 0 ]; then
  echo "gpucl-deep: $node passed"
  exit 0
fi
if [ "$status" -eq 124 ]; then
  detail="deep checks did not finish within 1800 s"
else
  detail=$(printf '%s\n' "$output" | grep -iE 'fail|error' | tail -n 1 | sed 's/^ERROR: *nhc: *Health check failed: *//' | tr -s '[:space:]' ' ' | cut -c 1-160)
  [ -n "$detail" ] || detail="run-health-checks.sh exited $status"
fi
state=$(sinfo -h -N -n "$node" -o '%T' | head -n 1)
case "$state" in
  *drain* | *DRAIN*)
    echo "gpucl-deep: $node failed ($detail) but is drained already: left as it is"
    exit 1
    ;;
esac
scontrol update nodename="$node" state=drain reason="gpucl-deep: $detail"
logger -t gpucl-deep "drained $node: $detail" 2>/dev/null || true
echo "gpucl-deep: drained $node: $detail"
exit 1
