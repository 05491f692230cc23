#!/bin/bash
# gpucl-deep-health (gpucl-deep-health.timer on the scheduler, every 24 h): the deep
# health tier on each GPU node that is idle right now, as an exclusive, low-priority job
# (gpucl-deep-check.sh on the node), so it never runs beside a job: a node that holds a job, or
# is powered down (checking it would start its VM), drained or down, is skipped and logged.
# A job that could not start before the next round is cancelled by Slurm (--deadline).
set -u
log=${GPUCL_DEEP_LOG:-/var/log/slurm/gpucl-deep.log}
say() { printf '%s gpucl-deep: %s\n' "$(date -Is)" "$*" | tee -a "$log"; }
submitted=0
# One squeue for the round, not one per node (slurmctld answers every call): each job's
# allocated nodes (%N) and, for a deep check still pending (no allocation yet), the node it
# asked for (%n, its -w). squeue(1) -w matches allocated nodes only, so a pending check is
# found by its request. Hostlists expand locally (`scontrol show hostnames` asks no daemon).
declare -A jobs_of=() queued=()
if ! queue=$(squeue -h -o '%i|%j|%T|%N|%n'); then
  say "squeue failed; no deep check submitted this round"
  exit 1
fi
while IFS='|' read -r id name state alloc asked; do
  case "$state" in RUNNING | CONFIGURING | COMPLETING)
    [ -n "$alloc" ] && for n in $(scontrol show hostnames "$alloc"); do jobs_of[$n]+=${jobs_of[$n]:+,}$id; done ;;
  esac
  if [ "$name" = gpucl-deep ] && [ -n "${alloc:-$asked}" ]; then
    for n in $(scontrol show hostnames "${alloc:-$asked}"); do queued[$n]=$id; done
  fi
done <<< "$queue"
while read -r node state part; do
  [ -n "$node" ] || continue
  if [ "$state" != idle ]; then
    jobs=${jobs_of[$node]:-}
    say "$node skipped: $state${jobs:+ (job $jobs)}"
    continue
  fi
  if [ -n "${queued[$node]:-}" ]; then
    say "$node skipped: a deep check is queued already (job ${queued[$node]})"
    continue
  fi
  job=$(sbatch --parsable --exclusive -w "$node" -p "${part%\*}" -J gpucl-deep --nice=10000 \
    --no-requeue --time=35 --deadline=now+24hours \
    -o /var/log/slurm/gpucl-deep-%j.out --wrap /usr/local/libexec/gpu-clusters/gpucl-deep-check.sh 2>&1) || {
    say "$node: sbatch refused: $job"
    continue
  }
  say "$node: deep check submitted as job $job"
  submitted=$((submitted + 1))
done < <(sinfo -h -N -o '%N %T %P' | sort -u)
say "round done: $submitted job(s) submitted"
