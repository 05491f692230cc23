"""The AKS GPU cluster (`AksGpuCluster`): ND node pools on InfiniBand, with the GPU add-ons.

aks_admin               AksAdminRole: Azure RBAC cluster admin for whoever runs `up`
aks_cluster             AksGpuCluster: the cluster, its pools and add-ons
aks_gpu_node_pool       one partition as a user node pool on one fabric
aks_infiniband_feature  the AKSInfinibandSupport registration preflight
aks_kubeconfig          the kubeconfig, read back as a secret
aks_maintenance         the weekly window for cluster upgrades and node image reimages
"""
