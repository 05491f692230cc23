#!/bin/bash
# gpucl-scratch (gpucl-scratch.service, at every boot, before slurmd): the VM's local NVMe disks as
# one scratch at /nvme (enroot's runtime, cache, data and temp live there).
# A reboot finds the array again; a deallocated or reimaged VM (blank disks) gets a new one. Without
# local NVMe the scratch stays a folder on the OS disk.
set -eu
mount_point=/nvme

mkdir -p "$mount_point"
if ! mountpoint -q "$mount_point"; then
  mapfile -t disks < <(lsblk -dpno NAME,MODEL | awk '/Microsoft NVMe Direct Disk|Amazon EC2 NVMe Instance Storage/ {print $1}')
  dev=
  if [ "${#disks[@]}" -eq 1 ]; then
    dev=${disks[0]}
  elif [ "${#disks[@]}" -gt 1 ]; then
    mdadm --assemble --scan >/dev/null 2>&1 || true
    # The array that holds the first disk, whatever name it was assembled under.
    dev=$(lsblk -npo NAME,TYPE "${disks[0]}" | awk '$2 == "raid0" {print $1; exit}')
    if [ -z "$dev" ]; then
      mdadm --create /dev/md/gpucl-scratch --name=gpucl-scratch --run --level=0 \
        --raid-devices="${#disks[@]}" "${disks[@]}"
      dev=/dev/md/gpucl-scratch
    fi
  else
    echo "gpucl-scratch: no local NVMe disks; $mount_point stays on the OS disk" >&2
  fi
  if [ -n "$dev" ]; then
    [ "$(blkid -s TYPE -o value "$dev" 2>/dev/null)" = xfs ] || mkfs.xfs -f "$dev"
    mount -o noatime "$dev" "$mount_point"
  fi
fi
chmod 1777 "$mount_point"
for dir in enroot/runtime enroot/cache enroot/data enroot/tmp jobs; do
  mkdir -p "$mount_point/$dir"
  chmod 1777 "$mount_point/$dir"
done
