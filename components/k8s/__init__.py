"""What every Kubernetes GPU cluster gets, over a Kubernetes provider (EKS or AKS alike).

gpu_addons    the GPU and network add-ons of a cluster
helm_addon    one pinned Helm chart in its own labelled namespace
mpi_operator  kubeflow/mpi-operator from its pinned release manifest
manifest      one rendered manifest as one visible resource
"""
