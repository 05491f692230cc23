"""Day-2 operations on a deployed Slurm cluster's nodes (`clusterctl node ...`), over the same SSH
transport as `clusterctl validate`, using the power program on the scheduler (clusterctl/power)."""
