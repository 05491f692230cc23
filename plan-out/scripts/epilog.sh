#!/bin/bash
# Slurm Epilog: clean up what a job may leave on the node-local NVMe scratch.
set -u
job=${SLURM_JOB_ID:-}
if [ -n "$job" ] && [ -d "/nvme/jobs/$job" ]; then
  rm -rf --one-file-system "/nvme/jobs/$job"
fi
exit 0
