"""ClusterSpec -> text: every file that lands on a node or in a cluster (jinja2 over templates/).
The only user of jinja2; pure functions, no Pulumi.

  templates    the jinja2 environment (the only place it is set up)
  paths        where things live on the nodes; fixed policies (ids, restarts, log rotation)
  versions     what cloud-init installs, from config/versions.yaml
  downloads    what a node downloads, and the pins it is checked against (sha256, commit, digest)
  slurm_conf   the Slurm files and the config sync a resize runs on the scheduler
  nccl_env     /etc/nccl.conf and the job environment from the SKU's profile
  health       HealthCheckProgram and the NHC confs of both tiers
  scripts      the scripts under libexec: prolog, epilog, power hooks, a node's bring-up
  cloud_init   the user-data of the scheduler, a login node and a GPU node
  team         the team's files (users, accounts, QoS) and the sync script that applies them
  site         where a Slurm cluster's files and daemons live on its nodes
  storage      where /home comes from (the scheduler's NFS export or Azure Files)
  deep         the deep health tier's timer and job script settings
  power_files  the power program as cloud-init installs it (its modules, config, venv pins)
  monitoring   Prometheus, its alert rules, the Slurm and DCGM exporters, the Grafana dashboards
  monitoring_k8s  a Kubernetes cluster's Prometheus release (values, rules, DCGM counters)
  apt_key      the Microsoft apt key carried in the user-data
  kubernetes   the Kubernetes objects: manifests, the NCCL MPIJob, Helm values
  vendored     files applied as shipped in config/ (the MPI operator manifest), sha256-checked
  roles        a Slurm cluster's files rendered once per run (SlurmPlan), read by all three routes
  user_data    each Slurm role's user-data rendered once per run, its secrets filled in at deploy
  bundle       every file, as `{path: text}`: what `plan --out` writes
"""
