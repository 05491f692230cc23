#!/bin/bash
# Slurm ResumeFailProgram: the nodes in $1 did not register within ResumeTimeout. slurmctld has
# set them DOWN and requeued their jobs; gpucl-power gives each a "gpucl: power:" reason
# naming the cause and deallocates it.
exec /usr/local/bin/gpucl-power fail "$1"
