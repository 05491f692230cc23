#!/bin/bash
# Derive this VM's Slurm node name from its scale-set instance: <scale set>-<instance id + 1>.
# Scale sets are named <cluster>-<fabric group> (e.g. h100-gpu-pg0); the Slurm name drops
# the cluster prefix, so names are deterministic and match the NodeName lines in slurm.conf.
set -eu
meta=$(curl -sf -H Metadata:true --max-time 10 \
  "http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01")
vm_name=$(printf '%s' "$meta" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])')
scale_set=${vm_name%_*}
instance=${vm_name##*_}
group=${scale_set#h100-}
echo "${group}-$((instance + 1))"
