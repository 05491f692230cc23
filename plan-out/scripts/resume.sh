#!/bin/bash
# Slurm ResumeProgram (runs as SlurmUser on the scheduler): start the deallocated VMs of the
# hostlist in $1. gpucl-power logs to /var/log/slurm/gpucl-power.log; a VM the platform cannot start is set
# DOWN with a "gpucl: power:" reason so its job is requeued onto other nodes.
exec /usr/local/bin/gpucl-power resume "$1"
