"""The Azure Slurm cluster (`AzureSlurmCluster`): a CycleCloud-like scheduler VM and GPU scale sets.

slurm_cluster       AzureSlurmCluster: the whole cluster in one component
props               the spec read once into each node component's frozen props
scheduler_node      the head VM: slurmctld, munge, the NFS export, the power program
scheduler_identity  the scheduler's managed identity
power_role          its custom role: start, deallocate, reimage, redeploy GPU nodes
gpu_partition       a partition as scale sets of at most 100 VMs (one fabric each)
slurm_config_sync   a resize (and the team: SlurmTeamSync) reaches the running scheduler
login_node          where the team logs in and submits: no managed identity
cluster_secrets     the munge key and the admin SSH key pair, as secrets
files_share         /home on an Azure Files NFS share
managed_lustre      storage.lustre: Azure Managed Lustre in its own subnet, mounted by the nodes
disk_backup         Azure Backup of the scheduler's data disk: vault, policy, roles, instance
jump_host           the only public IP when ssh.access is jumphost
network             resource group, VNet, subnets, NSGs (SSH only from allowed CIDRs)
public_ip           static Standard public addresses
os_profile          key-only SSH for the admin user
images              image references from the catalog or an override URN
vm_replacement      how a single VM with its own NIC is replaced (delete first, NIC kept)
"""
