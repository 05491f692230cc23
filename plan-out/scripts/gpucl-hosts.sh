#!/bin/bash
# gpucl-hosts: Slurm's node names resolve on every node, as users' tools expect (MASTER_ADDR from
# `scontrol show hostnames`, `ssh gpu-pg0-3`, pdsh, mpirun hostfiles). Azure DNS knows only the
# VMs' computer names (waagent does not publish a `hostnamectl` rename), so the addresses
# slurmctld holds (NodeAddr, from each slurmd's registration) go into a marked block of /etc/hosts:
#   publish  (the scheduler, by timer) writes them to /sched/h100/hosts when they change;
#   (none)   (every node, by timer) copies that file's lines into the block;
#   job      (the prolog, on each of a job's nodes) adds the job's nodes from slurmctld at once,
#            so a node powered up a moment ago resolves before the job starts.
set -eu
map=${GPUCL_HOSTS_MAP:-/sched/h100/hosts}
hosts=${GPUCL_HOSTS_FILE:-/etc/hosts}
run=${GPUCL_RUN_DIR:-/run}
begin="# BEGIN gpu-clusters Slurm node names ($map)"
end="# END gpu-clusters Slurm node names"

addresses() {  # "ADDR NAME" for the nodes asked (all by default) that have an address
  scontrol show node -o "$@" 2>/dev/null |
    sed -n 's/^NodeName=\([^ ]*\) .* NodeAddr=\([^ ]*\) .*/\2 \1/p' |
    awk '$1 != $2 && $1 ~ /^[0-9a-fA-F.:]+$/' | sort -k2
}

apply() {  # replace (or, with "merge", update) the block with "ADDR NAME" lines on stdin
  local lines old
  lines=$(cat)
  exec 9>"$run/gpucl-hosts.lock"
  flock -w 30 9
  old=$(sed -n "\|^$begin\$|,\|^$end\$|{\|^#|!p}" "$hosts")
  if [ "${1:-}" = merge ]; then
    lines=$(printf '%s\n%s\n' "$lines" "$old" | awk 'NF == 2 && !seen[$2]++' | sort -k2)
  fi
  [ "$lines" != "$old" ] || return 0
  # rewritten in place, not renamed over: /etc/hosts may be a bind mount
  {
    sed "\|^$begin\$|,\|^$end\$|d" "$hosts"
    printf '%s\n' "$begin"
    [ -z "$lines" ] || printf '%s\n' "$lines"
    printf '%s\n' "$end"
  } > "$run/gpucl-hosts.new"
  cat "$run/gpucl-hosts.new" > "$hosts"
  rm -f "$run/gpucl-hosts.new"
}

case "${1:-}" in
  publish)
    new=$(addresses)
    if [ -n "$new" ] && [ "$new" != "$(cat "$map" 2>/dev/null)" ]; then
      printf '%s\n' "$new" > "$map.tmp" && mv "$map.tmp" "$map"
    fi
    if [ -r "$map" ]; then apply < "$map"; fi  # none yet: no node has registered
    ;;
  job)
    addresses "${SLURM_JOB_NODELIST:?}" | apply merge
    ;;
  "")
    [ -r "$map" ] || exit 0  # /sched not mounted yet, or nothing published
    apply < "$map"
    ;;
  *)
    echo "usage: gpucl-hosts.sh [publish|job]" >&2
    exit 2
    ;;
esac
