"""The sandbox's all-reduce probe: a real ring all-reduce over TCP for clusters without GPUs.

Launched like nccl-tests (`srun -N<n> --ntasks-per-node=1 python3 -m clusterctl.probe -b .. -e ..`),
it prints its results in the nccl-tests table layout, so the same parser and judge apply.
Standard library only.
"""

from clusterctl.probe.ring import Ring, RingError, expand_hostlist, ring_allreduce

__all__ = ["Ring", "RingError", "expand_hostlist", "ring_allreduce"]
