#!/bin/bash
# This VM's Slurm node name, from the scheduler's name map /sched/h100/names.json
# ({"names": {scale set: {instance id: name}}}, kept by the scheduler's `gpucl-power names`).
# Uniform scale sets never reuse an instance id (after 4 -> 2 -> 4 nodes the ids are 0, 1, 4, 5),
# so the name is not derived from the id. A VM the map does not name yet leaves a request,
# name-requests/<vm name>, which starts the scheduler's gpucl-names.service (a path unit), and
# waits for its name, asking again each minute, for as long as it takes: a growth names its VMs
# only once the config sync has the new names in slurm.conf, after every new VM of every set
# has provisioned (up to 20 minutes each), and a node that gave up was never named. Progress on
# stderr. GPUCL_NAME_WAIT=N bounds the wait to N s (0: look once), exit 1 without a name.
set -eu
dir=/sched/h100
wait_s=${GPUCL_NAME_WAIT:-}
poll_s=${GPUCL_NAME_POLL:-5}
meta=$(curl -sf -H Metadata:true --max-time 10 \
  "http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01")
vm_name=$(printf '%s' "$meta" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])')
lookup() {
  python3 - "$dir/names.json" "${vm_name%_*}" "${vm_name##*_}" 2>/dev/null <<'PY'
import json, sys
path, scale_set, instance = sys.argv[1:]
name = json.load(open(path)).get("names", {}).get(scale_set, {}).get(instance)
sys.exit(print(name) if name else 1)
PY
}
if name=$(lookup); then
  echo "$name"
  exit 0
fi
request="$dir/name-requests/$vm_name"
trap 'rm -f "$request"' EXIT
echo "node-name: $vm_name is not in $dir/names.json; asking the scheduler for its Slurm name" >&2
waited=0
while :; do
  # (re)touch the request each minute: the path unit runs the reconciler on every change
  [ $((waited % 60)) -lt "$poll_s" ] && { touch "$request" 2>/dev/null || true; }
  if name=$(lookup); then
    echo "$name"
    exit 0
  fi
  if [ -n "$wait_s" ] && [ "$waited" -ge "$wait_s" ]; then
    echo "node-name: $vm_name got no Slurm name from the scheduler within ${wait_s}s ($dir/names.json)" >&2
    exit 1
  fi
  [ "$waited" -gt 0 ] && [ $((waited % 30)) -lt "$poll_s" ] && echo "node-name: $vm_name waits for its Slurm name from the scheduler (${waited}s)" >&2
  sleep "$poll_s"
  waited=$((waited + poll_s))
done
