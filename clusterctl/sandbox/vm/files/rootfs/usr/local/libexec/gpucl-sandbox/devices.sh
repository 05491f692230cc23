#!/bin/bash
# gpucl sandbox: /etc/gpucl-sandbox/devices lists "LINK TARGET [MODEL]" per line, written by the host
# for this node: make LINK point at TARGET, and record MODEL in the udev database (what lsblk reads).
set -u
conf=/etc/gpucl-sandbox/devices
[ -r "$conf" ] || exit 0
while read -r link target model; do
  [ -n "${link:-}" ] || continue
  [ "$link" != "-" ] && mkdir -p "$(dirname "$link")" && ln -sfn "$target" "$link"
  if [ -n "${model:-}" ] && [ -b "$target" ]; then
    mm=$(stat -Lc '%t:%T' "$target"); maj=$((16#${mm%:*})); min=$((16#${mm#*:}))
    mkdir -p /run/udev/data
    printf 'E:ID_MODEL=%s\nE:ID_MODEL_ENC=%s\nE:ID_TYPE=disk\n' "${model//_/ }" "${model//_/\\x20}" > "/run/udev/data/b$maj:$min"
  fi
done < "$conf"
