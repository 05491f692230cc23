"""AksInfinibandFeature: registers Microsoft.ContainerService/AKSInfinibandSupport, which makes AKS
keep a node pool's InfiniBand VMs on one fabric (Azure/aks-rdma-infiniband prerequisites).

A subscription-level registration: `pulumi destroy` leaves it (other clusters may rely on it), and
a first registration only takes effect after `az provider register -n Microsoft.ContainerService`
(the preflight finding says so).
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from clusterctl.spec.kubernetes import AKS_INFINIBAND_FEATURE


class AksInfinibandFeature(pulumi.ComponentResource):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-clusters:azure:AksInfinibandFeature", name, None, opts)
        namespace, feature = AKS_INFINIBAND_FEATURE
        self.registration = azure.features.SubscriptionFeatureRegistration(
            f"{name}-registration",
            provider_namespace=namespace,
            feature_name=feature,
            properties=azure.features.SubscriptionFeatureRegistrationPropertiesArgs(),
            opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
        )
        self.register_outputs({"feature": f"{namespace}/{feature}"})
