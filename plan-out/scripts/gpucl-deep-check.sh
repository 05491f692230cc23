#!/bin/bash
# gpucl-deep-check: the deep health tier on this node, run by the scheduler's gpucl-deep-health
# as an exclusive Slurm job, so it never runs beside a job. Two steps, each with its own budget:
# 1. Azure's own runner (azurehpc-health-checks on the HPC image: NHC with Azure's checks in its
#    container) runs /etc/nhc/gpucl-deep.conf; -t is NHC's watchdog for the whole run (its default, 500 s,
#    is shorter than an NCCL plus GPUDirect round), -o its log. It exits non-zero when a check
#    fails, printing NHC's "Health check failed" line.
# 2. DCGM's diagnostic at level 2 (dcgmi diag -r 2, DCGM ships on the HPC image; v0.4.5 of
#    Azure's checks has no NHC check for it), judged from its JSON: any test with status Fail.
# A failure drains the node with "gpucl-deep: <what failed>", a reason the fast tier never
# resumes; an admin (scontrol ... State=RESUME) or `clusterctl node replace` returns it. A drain
# someone else set stays theirs.
set -u
node=${SLURMD_NODENAME:-$(hostname -s)}
runner=${GPUCL_DEEP_RUNNER:-/opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh}
conf=${GPUCL_DEEP_CONF:-/etc/nhc/gpucl-deep.conf}
dcgmi=${GPUCL_DCGMI:-dcgmi}
if [ ! -x "$runner" ]; then
  echo "gpucl-deep: $runner not found; the Azure HPC image ships azurehpc-health-checks there"
  exit 2
fi
if [ ! -r "$conf" ]; then
  # without its -c file the runner falls back to Azure's whole SKU conf (or passes on a SKU it
  # does not know): never judge a node by that
  echo "gpucl-deep: $conf missing; cloud-init writes it"
  exit 2
fi

drain() {
  local detail=$1 state
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
}

output=$(timeout 1260 "$runner" -c "$conf" -t 1200 -o "${GPUCL_DEEP_RUNNER_LOG:-/var/log/slurm/gpucl-deep-runner.log}" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  if [ "$status" -eq 124 ] || [ "$status" -eq 142 ]; then
    drain "deep checks did not finish within 1200 s"
  fi
  detail=$(printf '%s\n' "$output" | grep -iE 'fail|error' | tail -n 1 | sed 's/^ERROR: *nhc: *Health check failed: *//' | tr -s '[:space:]' ' ' | cut -c 1-160)
  drain "${detail:-run-health-checks.sh exited $status}"
fi

if ! command -v "$dcgmi" >/dev/null 2>&1; then
  echo "gpucl-deep: $dcgmi not found: DCGM diag level 2 not run (the HPC image ships DCGM)"
  echo "gpucl-deep: $node passed"
  exit 0
fi
diag=$(timeout 540 "$dcgmi" diag -r 2 -j 2>&1)
status=$?
if [ "$status" -eq 124 ]; then
  drain "dcgm diag level 2 did not finish within 540 s"
fi
failed=$(printf '%s' "$diag" | python3 -c '
import json, sys
def walk(node, name):
    if isinstance(node, dict):
        name = node.get("name") or node.get("test_name") or name
        if str(node.get("status", "")).lower() == "fail":
            yield name
        for value in node.values():
            yield from walk(value, name)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value, name)
try:
    doc = json.loads(sys.stdin.read())
except ValueError:
    sys.exit(3)
print(" ".join(dict.fromkeys(n for n in walk(doc, "?") if n)))
')
parsed=$?
if [ "$parsed" -ne 0 ]; then
  last=$(printf '%s\n' "$diag" | tail -n 1 | tr -s '[:space:]' ' ' | cut -c 1-120)
  drain "dcgm diag level 2: exited $status without a JSON report: $last"
fi
if [ -n "$failed" ]; then
  drain "dcgm diag level 2 failed: $(printf '%s' "$failed" | cut -c 1-120)"
fi
echo "gpucl-deep: dcgm diag level 2 passed"
echo "gpucl-deep: $node passed"
exit 0
