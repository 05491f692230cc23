"""Azure clusters, one package per scheduler: `slurm` (AzureSlurmCluster), `aks` (AksGpuCluster)."""
