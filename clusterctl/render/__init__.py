"""ClusterSpec -> text: every file that lands on a node or in a cluster (jinja2 over templates/).
The only user of jinja2; pure functions, no Pulumi.

  engine       the jinja environment, slurm.conf and friends, the nodes' cloud-init
  site         where a Slurm cluster's files and daemons live on its nodes
  storage      where /home comes from (the scheduler's NFS export or Azure Files)
  deep         the deep health tier's timer and job script settings
  power_files  the power program as cloud-init installs it (its modules, config, venv pins)
  apt_key      the Microsoft apt key carried in the user-data
  kubernetes   the Kubernetes objects: manifests, the NCCL MPIJob, Helm values
  bundle       every file, as `{path: text}`: what `plan --out` writes
"""
