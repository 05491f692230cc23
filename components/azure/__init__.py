"""Azure clusters: the Slurm cluster (`AzureSlurmCluster`), the AKS cluster (`AksGpuCluster`), and
the pieces both use.

Slurm:
  slurm_cluster           AzureSlurmCluster: a CycleCloud-like Slurm cluster
  scheduler_node          the head VM: slurmctld, munge, the NFS export, the power program
  scheduler_identity      the scheduler's managed identity
  power_role              its custom role: start, deallocate, reimage, redeploy GPU nodes
  gpu_partition           a partition as scale sets of at most 100 VMs (one fabric each)
  slurm_config_sync       a resize reaches the running scheduler without restarting a node
  cluster_secrets         the munge key and the admin SSH key pair, as secrets
  files_share             /home on an Azure Files NFS share
  jump_host               the only public IP when ssh.access is jumphost
AKS:
  aks_cluster             AksGpuCluster: AKS with InfiniBand GPU node pools and add-ons
  aks_gpu_node_pool       one partition as a user node pool on one fabric
  aks_infiniband_feature  the AKSInfinibandSupport registration preflight
  aks_kubeconfig          the kubeconfig, read back as a secret
Both:
  network                 resource group, VNet, subnets, NSGs (SSH only from allowed CIDRs)
  public_ip               static Standard public addresses
  os_profile              key-only SSH for the admin user
  images                  image references from the catalog or an override URN
"""
