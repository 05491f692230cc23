"""The kubeconfig of an AKS cluster with Entra ID: the user's own Azure login, no cluster secret.

The cluster has local accounts off, so there are no admin credentials to read. AKS's user
credentials give the API server and its CA; the user entry is replaced by kubelogin's exec plugin
in `azurecli` mode, so kubectl, Helm and the Pulumi provider each get a short-lived Entra ID token
for whoever is logged in with `az login`, and Azure RBAC (or, with `kubernetes.authorization:
kubernetes-rbac`, the cluster's own RBAC) decides what that identity may do.
Needs `kubelogin` on the PATH (`az aks install-cli`).
"""

from __future__ import annotations

import base64

import pulumi
import pulumi_azure_native as azure
import yaml

AKS_SERVER_APP_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
"""The Entra ID application every AKS API server accepts tokens for (the `--server-id` AKS's own
exec-format kubeconfig passes to kubelogin)."""


def entra_kubeconfig(raw: str) -> str:
    """AKS's user kubeconfig with one user: kubelogin in azurecli mode (pure, no credentials)."""
    doc = yaml.safe_load(raw)
    (cluster,) = doc["clusters"]
    name = cluster["name"]
    user = f"{name}-entra"
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [cluster],
            "contexts": [{"name": name, "context": {"cluster": name, "user": user}}],
            "current-context": name,
            "users": [
                {
                    "name": user,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "kubelogin",
                            "args": [
                                "get-token",
                                "--login",
                                "azurecli",
                                "--server-id",
                                AKS_SERVER_APP_ID,
                            ],
                            "interactiveMode": "Never",
                            "provideClusterInfo": False,
                            "installHint": "kubelogin is needed: az aks install-cli",
                        }
                    },
                }
            ],
        },
        sort_keys=False,
    )


def aks_kubeconfig(
    resource_group_name: pulumi.Input[str],
    cluster_name: pulumi.Input[str],
    *,
    public_fqdn: bool = False,
) -> pulumi.Output[str]:
    """`public_fqdn`: a private cluster's kubeconfig names its public FQDN (which resolves to the
    private address), not the privatelink name that only a VNet linked to AKS's private DNS zone
    resolves; the deployer reaches the API through a VPN or peering (`az aks get-credentials
    --public-fqdn`, the API's `server-fqdn=public`)."""
    extra = {"server_fqdn": "public"} if public_fqdn else {}
    creds = azure.containerservice.list_managed_cluster_user_credentials_output(
        resource_group_name=resource_group_name,
        resource_name=cluster_name,
        format="exec",
        **extra,
    )
    # Not a credential any more; kept a secret output as the stack outputs' contract says.
    return pulumi.Output.secret(
        creds.kubeconfigs.apply(
            lambda kcs: entra_kubeconfig(base64.b64decode(kcs[0].value).decode())
        )
    )
