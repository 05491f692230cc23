#!/bin/bash
# Assemble the VM's local NVMe disks into one RAID0 scratch at /mnt/nvme (enroot data lives there).
# Idempotent: a reboot re-mounts the existing array; a reimaged VM (empty disks) builds it anew.
set -eu
mount_point=/mnt/nvme

mkdir -p "$mount_point"
if mountpoint -q "$mount_point"; then
  exit 0
fi
mapfile -t disks < <(lsblk -dpno NAME,MODEL | awk '/Microsoft NVMe Direct Disk|Amazon EC2 NVMe Instance Storage/ {print $1}')
if [ "${#disks[@]}" -eq 0 ]; then
  echo "nvme-raid: no local NVMe disks; $mount_point stays on the OS disk" >&2
  exit 0
fi
if [ ! -e /dev/md0 ]; then
  if [ "${#disks[@]}" -eq 1 ]; then
    mkfs.xfs -f "${disks[0]}"
    mount "${disks[0]}" "$mount_point"
    exit 0
  fi
  mdadm --create /dev/md0 --run --level=0 --raid-devices="${#disks[@]}" "${disks[@]}"
  mkfs.xfs -f /dev/md0
fi
mount -o noatime /dev/md0 "$mount_point"
chmod 1777 "$mount_point"
