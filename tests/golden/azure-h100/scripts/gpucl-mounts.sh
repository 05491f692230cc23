#!/bin/bash
# gpucl-mounts (GPU and login nodes): mount the scheduler's NFS exports from fstab.
# - Run once by cloud-init at first boot, after it has put them into fstab. A node may get here
#   before the scheduler exports them (its cloud-init still installs): retry every 10 s for at most
#   1200 s, saying each time what is missing, then fail naming it; `mount -a` under set -e ended
#   the node's setup at the first miss.
# - `--wait`: at every start of slurmd (its ExecStartPre, GPU nodes) and of gpucl-mounts.service
#   (login nodes), retrying for as long as it takes. The fstab entries are nofail: a boot while
#   the scheduler is away or being re-created leaves them failed and systemd never mounts them
#   again; slurmd must not run jobs without /home and /sched, and RequiresMountsFor= would
#   leave slurmd failed on the failed mount for good (a dependency failure is not restarted by
#   Restart=). Each try is bounded, so a scheduler that comes back is
#   seen within one try and one delay.
set -u
delay=${GPUCL_MOUNT_DELAY:-10}
total=${GPUCL_MOUNT_TOTAL:-1200}
attempt=${GPUCL_MOUNT_ATTEMPT:-30}
[ "${1:-}" = --wait ] && total=0
deadline=$((SECONDS + total))
while :; do
  missing=""
  for m in /home /sched; do
    mountpoint -q "$m" && continue
    mkdir -p "$m"
    err=$(timeout "$attempt" mount "$m" 2>&1) || missing="$missing $m (${err:-mount failed})"
  done
  [ -z "$missing" ] && exit 0
  if [ "$total" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; then
    echo "gpucl-mounts: gave up after ${total} s, not mounted:$missing; is the scheduler's nfs-server up and exporting them (exportfs -v)?" >&2
    exit 1
  fi
  echo "gpucl-mounts: not mounted yet:$missing; the scheduler may still be exporting, retrying in ${delay} s" >&2
  sleep "$delay"
done
