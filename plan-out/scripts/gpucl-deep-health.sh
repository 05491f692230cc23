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
while read -r node state part; do
  [ -n "$node" ] || continue
  if [ "$state" != idle ]; then
    jobs=$(squeue -h -w "$node" -t RUNNING,CONFIGURING,COMPLETING -o %i | paste -sd, -)
    say "$node skipped: $state${jobs:+ (job $jobs)}"
    continue
  fi
  if [ -n "$(squeue -h -w "$node" -n gpucl-deep -o %i)" ]; then
    say "$node skipped: a deep check is queued already"
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
