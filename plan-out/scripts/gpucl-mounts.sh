#!/bin/bash
# gpucl-mounts (run once by cloud-init on a GPU node): mount the scheduler's NFS exports that
# cloud-init has just put into fstab. A node may get here before the scheduler exports them (its
# cloud-init still installs): retry every 10 s for at most 1200 s, saying each time what is
# missing, then fail naming it; `mount -a` under set -e ended the node's setup at the first miss.
set -u
delay=${GPUCL_MOUNT_DELAY:-10}
total=${GPUCL_MOUNT_TOTAL:-1200}
deadline=$((SECONDS + total))
while :; do
  missing=""
  for m in /home /sched; do
    mountpoint -q "$m" && continue
    mkdir -p "$m"
    err=$(mount "$m" 2>&1) || missing="$missing $m (${err:-mount failed})"
  done
  [ -z "$missing" ] && exit 0
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "gpucl-mounts: gave up after ${total} s, not mounted:$missing; is the scheduler's nfs-server up and exporting them (exportfs -v)?" >&2
    exit 1
  fi
  echo "gpucl-mounts: not mounted yet:$missing; the scheduler may still be exporting, retrying in ${delay} s" >&2
  sleep "$delay"
done
