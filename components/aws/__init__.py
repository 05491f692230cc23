"""EKS GPU clusters on AWS: the components `EksGpuCluster` is made of.

eks_cluster          EksGpuCluster: the cluster, its node groups and the GPU add-ons
vpc                  private subnets per zone and a NAT for egress
iam                  the cluster and node roles, AWS managed policies only
access               the EKS access entry for whoever runs `pulumi up`
system_node_group    small CPU nodes for CoreDNS, operators and the NCCL launcher
gpu_node_group       one partition as a managed node group, with its EFA interfaces
cluster_autoscaler   the cluster autoscaler's AWS role, through EKS Pod Identity
efa_launch_template  EFA interfaces, IMDSv2, placement, reserved capacity
efa_security_group   all protocols from and to itself, as EFA's SRD needs
fsx_lustre           kubernetes.sharedFilesystem: FSx for Lustre open to the nodes only
kubeconfig           short-lived tokens from `aws eks get-token`
"""
