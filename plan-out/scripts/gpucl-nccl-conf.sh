#!/bin/bash
# gpucl-nccl-conf: put our NCCL settings into /etc/nccl.conf without dropping the image's own.
# The Azure HPC image's sku-customizations.service rewrites /etc/nccl.conf at every boot; this runs
# after it (a drop-in's ExecStartPost) and once from cloud-init: each of our keys replaces a line
# with the same key, the image's other lines stay.
set -eu
ours=${GPUCL_NCCL_OURS:-/etc/gpu-clusters/nccl.conf}
target=${GPUCL_NCCL_CONF:-/etc/nccl.conf}
[ -r "$ours" ] || exit 0
touch "$target"
tmp=$(mktemp "$target.XXXXXX")
keys=$(grep -E '^[A-Z_][A-Z0-9_]*=' "$ours" | cut -d= -f1 | paste -sd'|' -)
if [ -n "$keys" ]; then
  grep -vE "^($keys)=" "$target" > "$tmp" || true
else
  cat "$target" > "$tmp"
fi
grep -E '^[A-Z_][A-Z0-9_]*=' "$ours" >> "$tmp"
chmod 0644 "$tmp"
mv "$tmp" "$target"
