"""AksGpuCluster: an AKS cluster whose GPU node pools run on InfiniBand, with the GPU add-ons.

Resource group -> AKSInfinibandSupport registration -> AKS (Standard tier, system pool, Azure CNI
overlay with Cilium enforcing network policies, Entra ID with Azure RBAC or Kubernetes RBAC, local
accounts off) -> the deployer's cluster-admin role assignment (Azure RBAC) ->
one GPU node pool per partition -> Kubernetes add-ons (Network Operator + NicClusterPolicy, GPU
Operator or device plugin, MPI operator, ...) over the cluster's kubeconfig.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_azure_native as azure
import pulumi_kubernetes as k8s

from clusterctl import outputs as out
from clusterctl.spec.catalog import catalog
from clusterctl.spec.defaults import head_sku
from clusterctl.spec.kubernetes import (
    AKS_NODE_OS_UPGRADE_CHANNEL,
    AKS_UPGRADE_CHANNEL,
    AUTOSCALER_IDLE_MINUTES,
    NODE_PROVISION_MINUTES,
    fabric_kind,
    kubernetes_version,
    nccl_launcher,
    partition_pools,
)
from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.tags import cloud_tags, k8s_labels
from components.azure.aks.aks_admin import AksAdminRole
from components.azure.aks.aks_gpu_node_pool import AksGpuNodePool, agent_pool_name, gpu_driver
from components.azure.aks.aks_infiniband_feature import AksInfinibandFeature
from components.azure.aks.aks_kubeconfig import aks_kubeconfig
from components.azure.aks.aks_maintenance import AksMaintenance
from components.k8s.gpu_addons import KubernetesGpuAddons


def _api_server_access(spec: ClusterSpec):
    """Public: only `ssh.allowedCidrs` (never none: AKS reads none as "anywhere",
    rules_k8s.api_server_reach). Private: a private cluster; AKS applies no authorized ranges to
    the private endpoint, so who reaches it is who is routed into the VNet (the allowed ranges,
    by the VPN or peering). Its public FQDN resolves to the private address, so a peered network
    needs no link to AKS's private DNS zone (MicrosoftDocs azure-aks-docs private-clusters.md)."""
    if spec.kubernetes.private_api_server:
        return azure.containerservice.ManagedClusterAPIServerAccessProfileArgs(
            enable_private_cluster=True, enable_private_cluster_public_fqdn=True
        )
    return azure.containerservice.ManagedClusterAPIServerAccessProfileArgs(
        authorized_ip_ranges=list(spec.ssh.allowed_cidrs)
    )


class AksGpuCluster(pulumi.ComponentResource):
    def __init__(
        self, name: str, spec: ClusterSpec, stack: str, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("gpu-clusters:azure:AksGpuCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cat = catalog()
        tags = cloud_tags(spec, stack)
        labels = k8s_labels(spec, stack)
        version = kubernetes_version(spec, cat)

        self.resource_group = azure.resources.ResourceGroup(
            f"{name}-rg",
            resource_group_name=f"rg-{spec.name}-{stack}",
            location=spec.region,
            tags=tags,
            opts=child,
        )
        infiniband = any(fabric_kind(p, cat) == "infiniband" for p in spec.partitions)
        self.infiniband_feature = AksInfinibandFeature(f"{name}-ib", child) if infiniband else None
        self._client = azure.authorization.get_client_config()
        self.cluster = self._managed_cluster(name, spec, stack, version, tags, labels, child)
        self.maintenance = AksMaintenance(
            f"{name}-maintenance", self.resource_group.name, self.cluster.name, child
        )
        # With Kubernetes RBAC the deployer is cluster-admin through adminGroupObjectIds instead
        self.admin = (
            AksAdminRole(
                f"{name}-admin", self.cluster.id, self._client.object_id, stack, spec.name, child
            )
            if spec.kubernetes.authorization == "azure-rbac"
            else None
        )
        self.gpu_pools: dict[str, AksGpuNodePool] = {}
        depends = [self.infiniband_feature] if self.infiniband_feature else []
        for part in spec.partitions:
            for pool in partition_pools(part):
                # the first pool keeps the partition's resource name (no replacement)
                key = part.name if pool.index == 0 else pool.name
                self.gpu_pools[key] = self._pool(name, key, spec, part, cat, pool, labels, tags,
                                                 depends)  # fmt: skip

        self.kubeconfig = aks_kubeconfig(
            self.resource_group.name,
            self.cluster.name,
            public_fqdn=spec.kubernetes.private_api_server,
        )
        # The Helm releases below run as the deployer: its cluster-admin role must exist first.
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.admin] if self.admin else []),
        )
        self.k8s_addons = KubernetesGpuAddons(
            f"{name}-addons",
            spec,
            stack,
            self.provider,
            pulumi.ResourceOptions(parent=self, depends_on=list(self.gpu_pools.values())),
        )
        self.outputs = self._outputs(spec, stack, cat, version)
        self.register_outputs(self.outputs)

    def _pool(self, name, key, spec, part, cat, pool, labels, tags, depends) -> AksGpuNodePool:
        return AksGpuNodePool(
            f"{name}-{key}",
            spec,
            part,
            cat,
            pool=pool,
            resource_group_name=self.resource_group.name,
            cluster_name=self.cluster.name,
            labels=labels,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends),
        )

    def _managed_cluster(self, name, spec, stack, version, tags, labels, child):
        """The control plane with its system pool; GPU pools are separate resources."""
        return azure.containerservice.ManagedCluster(
            f"{name}-aks",
            resource_group_name=self.resource_group.name,
            resource_name_=f"aks-{spec.name}-{stack}",
            location=spec.region,
            dns_prefix=f"{spec.name}-{stack}",
            kubernetes_version=version,
            identity=azure.containerservice.ManagedClusterIdentityArgs(type="SystemAssigned"),
            node_resource_group=f"rg-{spec.name}-{stack}-nodes",
            agent_pool_profiles=[
                azure.containerservice.ManagedClusterAgentPoolProfileArgs(
                    name="system",
                    mode="System",
                    type="VirtualMachineScaleSets",
                    vm_size=head_sku(spec),
                    orchestrator_version=version,
                    count=spec.kubernetes.system_nodes,
                    os_type="Linux",
                    os_sku="Ubuntu",
                    enable_node_public_ip=False,
                    node_labels={**labels, "gpu-clusters/role": "system"},
                    tags=tags,
                )
            ],
            # Free: no SLA (docs/decisions/0008-kubernetes-network-and-access.md)
            sku=azure.containerservice.ManagedClusterSKUArgs(
                name="Base", tier=spec.kubernetes.aks_tier.capitalize()
            ),
            # Cilium enforces NetworkPolicy (the nccl-tests namespace's default deny); the policy
            # `cilium` needs the Cilium dataplane (the API's NetworkPolicy enum; decision 0008).
            network_profile=azure.containerservice.ContainerServiceNetworkProfileArgs(
                network_plugin="azure",
                network_plugin_mode="overlay",
                network_dataplane="cilium",
                network_policy="cilium",
            ),
            api_server_access_profile=_api_server_access(spec),
            enable_rbac=True,
            # Entra ID sign-in, Kubernetes authorization by Azure RBAC (or, if the stack says
            # so, Kubernetes RBAC with Entra groups as cluster-admin), and no local accounts:
            # no static admin certificate exists to leak.
            aad_profile=azure.containerservice.ManagedClusterAADProfileArgs(
                managed=True,
                enable_azure_rbac=spec.kubernetes.authorization == "azure-rbac",
                admin_group_object_ids=list(spec.kubernetes.admin_group_object_ids) or None,
                tenant_id=self._client.tenant_id,
            ),
            disable_local_accounts=True,
            # Workload identity: a pod's service account can be federated with an Entra ID
            # managed identity, so no workload needs a secret or the node's identity.
            oidc_issuer_profile=azure.containerservice.ManagedClusterOIDCIssuerProfileArgs(
                enabled=True
            ),
            security_profile=azure.containerservice.ManagedClusterSecurityProfileArgs(
                workload_identity=azure.containerservice.ManagedClusterSecurityProfileWorkloadIdentityArgs(
                    enabled=True
                )
            ),
            # The autoscaler of the GPU pools (on in each AksGpuNodePool): a node leaves
            # AUTOSCALER_IDLE_MINUTES after its last GPU pod, and may take
            # NODE_PROVISION_MINUTES to join (ND VMs take up to 20).
            auto_scaler_profile=azure.containerservice.ManagedClusterPropertiesAutoScalerProfileArgs(
                scale_down_unneeded_time=f"{AUTOSCALER_IDLE_MINUTES}m",
                max_node_provision_time=f"{NODE_PROVISION_MINUTES}m",
            ),
            # Upgrades and node reimages only inside the AksMaintenance window.
            auto_upgrade_profile=azure.containerservice.ManagedClusterAutoUpgradeProfileArgs(
                upgrade_channel=AKS_UPGRADE_CHANNEL,
                node_os_upgrade_channel=AKS_NODE_OS_UPGRADE_CHANNEL,
            ),
            tags=tags,
            opts=child,
        )

    def _outputs(self, spec, stack, cat, version) -> dict[str, Any]:
        return {  # AksClusterOutputs
            out.KUBECONFIG: self.kubeconfig,  # a secret Output
            out.KUBERNETES_VERSION: version,
            out.RESOURCE_GROUP: self.resource_group.name,
            out.AKS_CLUSTER_NAME: self.cluster.name,
            out.GPU_NODE_POOLS: {
                p.name: {
                    "agentPoolName": agent_pool_name(p),
                    "agentPoolNames": [agent_pool_name(p, g.index) for g in partition_pools(p)],
                    "vmSize": p.sku,
                    "nodes": p.nodes,
                    "gpuDriver": gpu_driver(spec),
                }
                for p in spec.partitions
            },
            out.ADDON_VERSIONS: self.k8s_addons.chart_versions,
            out.NCCL_LAUNCHER: nccl_launcher(spec, stack, cat),
        }
