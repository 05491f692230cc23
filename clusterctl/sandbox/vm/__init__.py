"""VM-like sandbox nodes: systemd-nspawn containers that boot systemd and cloud-init like cloud VMs.

Modules, one concern each:
  substitutions  the declared list of what stands in for what (and the one user-data rewrite)
  image          the cached node image (mmdebstrap of Debian trixie + HPC-image stand-ins)
  repo           the local apt repository (Debian's .debs + slurm-smd/nfs stand-in packages)
                 and the GPU nodes' HPC-image layer
  github         the github.com stand-in: enroot .debs, pyxis and NHC repositories, TLS
  debs           the .debs the apt and github.com stand-ins build (one file tree -> one .deb)
  labserver      the HTTP(S) server in the lab netns: apt repo, IMDS, github.com (stdlib only)
  lab            network namespaces, bridge, veths, the lab server process
  nfsbind        the NFS stand-in's server side: attach a node's export inside another node
  machine        one node: overlay root, NoCloud seed, GPU/NVMe stand-ins, systemd-nspawn, nsenter
  vmstate        the record-before-create state file that `down` walks
  report         cloud-init status, failed units, system state per node; leftovers on the host
  boot           up / status / run / reboot / down for a whole cluster
  faults         slow link, GPU gone, slurmd killed; clear
  checks         what `up` checks after boot (logs, munge, idle nodes, srun, sbatch)
  power          the power-api stand-in: start, deallocate, reimage a node's VM (its container)
  pypi           the PyPI stand-in: the wheels the user-data's pins need
  relay          ssh's ProxyCommand into the lab (stdlib only)
  attach         `sandbox exec`: a command on a node, attached to this terminal
  target         the sandbox as a validation target, and its probe benchmark

Public API (what a CLI calls):
  boot.cluster_from_plan(plan_dir, nodes=None, gpus=8, nvme_disks=1) -> list[boot.NodeSpec]
  boot.up(specs, workdir, timeout=900.0, log=print) -> dict[node, report]
  boot.status(workdir) -> dict[node, dict]
  boot.run(workdir, node, cmd, timeout=120.0) -> subprocess.CompletedProcess
  boot.reboot(workdir, node, timeout=300.0, log=print) -> report
  faults.inject(workdir, node, "slow-link"|"fail-health"|"kill-slurmd"|"clear") -> str
  boot.down(workdir, log=print) -> bool
  report.summary(reports) -> str;  report.leftovers(workdir) -> list[str]
  substitutions.explain() -> str;  substitutions.write(workdir) -> Path
  image.build(recipe=Recipe(), log=print) -> Image;  repo.prepare(image, log=print) -> Path
"""
