#!/bin/bash
# Slurm SuspendProgram (runs as SlurmUser on the scheduler): deallocate the idle VMs of the
# hostlist in $1. Compute billing stops; the VM, its disks and so its node name survive.
exec /usr/local/bin/gpucl-power suspend "$1"
