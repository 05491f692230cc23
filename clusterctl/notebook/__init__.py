"""`clusterctl notebook`: JupyterLab as a job on a GPU node, reached through a local tunnel.

request  what the user asked for (GPUs, time, partition), checked against the stack
slurm    the batch job, its JupyterLab and the SSH tunnel through the login node
kube     the Job in the team's Kueue queue and `kubectl port-forward`
session  the one loop both run: start, wait (bounded, with progress), tunnel, cancel
"""
