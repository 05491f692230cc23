#!/bin/bash
# Slurm Prolog (PrologFlags=Alloc,Contain): runs once per node when a job is allocated.
# Refuse to start a job on a node whose GPUs are not all visible; the node drains with our prefix.
set -u
expected=8
if command -v nvidia-smi >/dev/null 2>&1; then
  found=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  if [ "$found" -ne "$expected" ]; then
    scontrol update nodename="${SLURMD_NODENAME:-$(hostname -s)}" state=drain \
      reason="gpucl: prolog: $found of $expected GPUs visible"
    exit 1
  fi
fi
# The job's nodes by their Slurm names (MASTER_ADDR, ssh to a peer), whatever the timer saw so far.
/usr/local/libexec/gpu-clusters/gpucl-hosts.sh job || echo "prolog: gpucl-hosts.sh job failed; names may not resolve" >&2
# This node's current host key where its peers' ssh looks (a VM powered up a moment ago has new
# ones): every node of the job has published before any of the job's processes runs `ssh`.
/usr/local/libexec/gpu-clusters/gpucl-known-hosts.sh publish "${SLURMD_NODENAME:-}" ||
  echo "prolog: gpucl-known-hosts.sh publish failed; ssh from a peer may not know this node" >&2
exit 0
