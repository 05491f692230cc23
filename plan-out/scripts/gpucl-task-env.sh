#!/bin/bash
# gpucl-task-env (Slurm TaskProlog, run by slurmd before each task with the task's environment):
# every `export NAME=value` printed here is set in the task. Exports the node's job environment
# (/etc/gpu-clusters/job.env: CUDA, UCX, Open MPI settings for this SKU) where the job has not set the
# variable itself, as NCCL treats /etc/nccl.conf.
env_file=${GPUCL_JOB_ENV:-/etc/gpu-clusters/job.env}
[ -r "$env_file" ] || exit 0
while IFS='=' read -r key value; do
  case "$key" in '' | \#*) continue ;; esac
  [[ "$key" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
  [ -n "${!key+set}" ] && continue
  echo "export $key=$value"
done < "$env_file"
