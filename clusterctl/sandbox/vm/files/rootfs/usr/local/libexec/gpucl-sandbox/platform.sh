#!/bin/bash
# gpucl sandbox platform stand-ins, run early at every boot (before local-fs and cloud-init):
# 1. cgroup: systemd-nspawn mounts the v1 controllers read-only; the host binds this node's own
#    subtree of each at /run/gpucl-sandbox/cgroup/<controller>: put it where slurmd looks for it.
# 2. devices: /etc/gpucl-sandbox/devices lists "LINK TARGET [MODEL]" per line, written by the host
#    for this node: LINK points at TARGET; MODEL goes in the udev database (what lsblk reads).
# 3. fstab: in a container systemd-fstab-generator ignores device entries ("Running in a container,
#    ignoring fstab device entry"), so a VM's boot-time mounts of local disks (e.g. LABEL=... /shared)
#    would never happen after a reboot: mount them here, the way the VM's systemd would.
set -u
for d in /run/gpucl-sandbox/cgroup/*; do
  [ -d "$d" ] && [ -d "/sys/fs/cgroup/${d##*/}" ] && mount --bind "$d" "/sys/fs/cgroup/${d##*/}"
done
conf=/etc/gpucl-sandbox/devices
if [ -r "$conf" ]; then
  while read -r link target model; do
    [ -n "${link:-}" ] || continue
    [ "$link" != "-" ] && mkdir -p "$(dirname "$link")" && ln -sfn "$target" "$link"
    if [ -n "${model:-}" ] && [ -b "$target" ]; then
      mm=$(stat -Lc '%t:%T' "$target"); maj=$((16#${mm%:*})); min=$((16#${mm#*:}))
      mkdir -p /run/udev/data
      printf 'E:ID_MODEL=%s\nE:ID_MODEL_ENC=%s\nE:ID_TYPE=disk\n' "${model//_/ }" "${model//_/\\x20}" > "/run/udev/data/b$maj:$min"
    fi
  done < "$conf"
fi
mount -a -O no_netdev -t xfs,ext4,ext3,ext2,btrfs || true
exit 0
