"""AksAdminRole: cluster admin for whoever runs `pulumi up`, as an Azure role assignment.

With Azure RBAC for Kubernetes authorization, no one (the cluster's creator included) may use the
Kubernetes API until Azure grants a role: the deployer gets "Azure Kubernetes Service RBAC Cluster
Admin" on this cluster only, so the Helm releases of the same `up` can install. Grant others a
role on the cluster (`az role assignment create --scope <cluster id> ...`), not a kubeconfig.
"""

from __future__ import annotations

import os
import uuid

import pulumi
import pulumi_azure_native as azure

AKS_RBAC_CLUSTER_ADMIN = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
"""The built-in role "Azure Kubernetes Service RBAC Cluster Admin" (Azure built-in roles list)."""


def deployer_principal_type() -> str:
    """Azure refuses an assignment whose principalType is not the principal's (and the provider
    defaults it to User). The azure-native provider signs in as a service principal or managed
    identity when given a client id or MSI (config or ARM_* variables), else through the az CLI,
    usually a user. A CLI session of a service principal (`az login --service-principal`) is
    not told apart: set ARM_CLIENT_ID there."""
    config = pulumi.Config("azure-native")
    if config.get("clientId") or config.get_bool("useMsi") or config.get_bool("useOidc"):
        return "ServicePrincipal"
    if any(os.environ.get(v) for v in ("ARM_CLIENT_ID", "ARM_USE_MSI", "ARM_USE_OIDC")):
        return "ServicePrincipal"
    return "User"


def assignment_name(stack: str, cluster: str) -> str:
    """A stable GUID per stack and cluster, so `up` after `up` keeps the same assignment."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpu-clusters/{stack}/{cluster}/aks-rbac-admin"))


class AksAdminRole(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        cluster_id: pulumi.Input[str],
        principal_id: str,
        stack: str,
        cluster: str,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:azure:AksAdminRole", name, None, opts)
        subscription = azure.authorization.get_client_config().subscription_id
        self.assignment = azure.authorization.RoleAssignment(
            f"{name}-assignment",
            role_assignment_name=assignment_name(stack, cluster),
            principal_id=principal_id,
            principal_type=deployer_principal_type(),
            role_definition_id=(
                f"/subscriptions/{subscription}/providers/Microsoft.Authorization/"
                f"roleDefinitions/{AKS_RBAC_CLUSTER_ADMIN}"
            ),
            scope=cluster_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"principalId": principal_id})
