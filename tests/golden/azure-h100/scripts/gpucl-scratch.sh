#!/bin/bash
# gpucl-scratch (gpucl-scratch.service, at every boot, before slurmd): the VM's local NVMe disks as
# one scratch at /nvme (enroot's runtime, data and temp live there); enroot's layer cache
# is on the OS disk at /var/cache/enroot, which deallocation keeps, trimmed here to 96 GiB.
# A reboot finds the array again; a deallocated or reimaged VM (blank disks) gets a new one. Without
# local NVMe the scratch stays a folder on the OS disk, unless the size has local NVMe: then finding
# none fails this unit with the reason (journalctl -u gpucl-scratch) rather than leaving NHC to drain
# the node on a scratch that is merely not mounted.
set -eu
mount_point=/nvme
expected_disks=8
cache=/var/cache/enroot
cache_budget_kib=$((96 * 1024 * 1024))

# Local disks by the model the controller reports, as Azure's azure-vm-utils udev rules name them:
# "Microsoft NVMe Direct Disk" and "Microsoft NVMe Direct Disk v2". "MSFT NVMe Accelerator v1.0" is
# a remote managed disk on NVMe-controller sizes, never scratch.
local_disks() {
  awk '{ name = $1; $1 = ""; sub(/^ +/, ""); sub(/ +$/, "") }
       $0 == "Microsoft NVMe Direct Disk" || $0 == "Microsoft NVMe Direct Disk v2" ||
       $0 == "Amazon EC2 NVMe Instance Storage" { print name }'
}
models_seen() { lsblk -dno MODEL | sed 's/ *$//' | sort -u | paste -sd, -; }
mkdir -p "$mount_point"
if ! mountpoint -q "$mount_point"; then
  # The models come from udev's database: wait (bounded) for the NVMe devices' events first.
  udevadm settle --timeout=60 || true
  mapfile -t disks < <(lsblk -dpno NAME,MODEL | local_disks)
  if [ "${expected_disks:-0}" -gt 0 ] && [ "${#disks[@]}" -eq 0 ]; then
    echo "gpucl-scratch: this size has $expected_disks local NVMe disks and none was found" \
      "(models seen: $(models_seen)); $mount_point is not mounted" >&2
    exit 1
  fi
  if [ "${expected_disks:-0}" -gt 0 ] && [ "${#disks[@]}" -ne "$expected_disks" ]; then
    echo "gpucl-scratch: expected $expected_disks local NVMe disks, found ${#disks[@]}: ${disks[*]}" >&2
  fi
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
    echo "gpucl-scratch: no local NVMe disks (models seen: $(models_seen));" \
      "$mount_point stays on the OS disk" >&2
  fi
  if [ -n "$dev" ]; then
    [ "$(blkid -s TYPE -o value "$dev" 2>/dev/null)" = xfs ] || mkfs.xfs -f "$dev"
    mount -o noatime "$dev" "$mount_point"
  fi
fi
chmod 1777 "$mount_point"
for dir in enroot/runtime enroot/data enroot/tmp jobs; do
  mkdir -p "$mount_point/$dir"
  chmod 1777 "$mount_point/$dir"
done
# enroot never evicts its layer cache: past the budget, drop the least recently read files (a
# dropped layer is downloaded again when an image needs it). relatime updates atime once a day.
mkdir -p "$cache"
chmod 1777 "$cache"
used=$(du -sk "$cache" | cut -f1)
if [ "$used" -gt "$cache_budget_kib" ]; then
  while read -r _ kib path; do
    [ "$used" -le "$cache_budget_kib" ] && break
    rm -f -- "$path"
    used=$((used - kib))
  done < <(find "$cache" -type f -printf '%A@ %k %p\n' | sort -n)
  echo "gpucl-scratch: enroot's layer cache trimmed to $((used / 1024)) MiB" \
    "(budget $((cache_budget_kib / 1024)) MiB)" >&2
fi
