"""AksInfinibandFeature: the preflight for Microsoft.ContainerService/AKSInfinibandSupport, which
makes AKS keep a node pool's InfiniBand VMs on one fabric (Azure/aks-rdma-infiniband prerequisites).

The registration is asynchronous (Registering can take many minutes) and takes effect only after
`az provider register --namespace Microsoft.ContainerService`. A node pool created meanwhile comes
up without one fabric and the only fix is to recreate it, so the program does not register the
feature in the same `up` as the pool: it reads the feature's state first and stops before creating
anything unless it is Registered, saying what to run (docs/decisions/0004).
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure

from clusterctl.spec.kubernetes import AKS_INFINIBAND_FEATURE

REGISTERED = "Registered"


def registration_steps() -> str:
    namespace, feature = AKS_INFINIBAND_FEATURE
    return (
        f"run `az feature register --namespace {namespace} --name {feature}`, wait until "
        f"`az feature show --namespace {namespace} --name {feature} --query properties.state` "
        f"says {REGISTERED}, then `az provider register --namespace {namespace}`, and run "
        "`pulumi up` again"
    )


def check_registered(state: str | None) -> None:
    """pulumi.RunError (one message, no traceback) unless the feature is Registered."""
    if state == REGISTERED:
        return
    namespace, feature = AKS_INFINIBAND_FEATURE
    raise pulumi.RunError(
        f"{namespace}/{feature} is {state or 'NotRegistered'} in this subscription, not "
        f"{REGISTERED}: a GPU node pool made now would not share one InfiniBand fabric; "
        + registration_steps()
    )


class AksInfinibandFeature(pulumi.ComponentResource):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-clusters:azure:AksInfinibandFeature", name, None, opts)
        namespace, feature = AKS_INFINIBAND_FEATURE
        found = azure.features.get_subscription_feature_registration(
            provider_namespace=namespace, feature_name=feature
        )
        self.state = found.properties.state if found.properties else None
        check_registered(self.state)
        self.register_outputs({"feature": f"{namespace}/{feature}", "state": self.state})
