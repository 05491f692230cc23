"""VM-like sandbox nodes: systemd-nspawn containers that boot systemd and cloud-init like cloud VMs.

Modules, one concern each:
  substitutions  the declared list of what stands in for what (and the one user-data rewrite)
  image          the cached node image (mmdebstrap of Debian trixie + HPC-image stand-ins)
  repo           the local apt repository (Debian's .debs + slurm-smd/nfs stand-in packages)
  labserver      the HTTP server in the lab netns: apt repo + IMDS stand-in (stdlib only)
  lab            network namespaces, bridge, veths, the lab server process
  machine        one node: overlay root, NoCloud seed, systemd-nspawn, nsenter
  vmstate        the record-before-create state file that `down` walks
  boot           up / report / down for a whole cluster
"""
