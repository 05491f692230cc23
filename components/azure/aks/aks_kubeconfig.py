"""The kubeconfig of an AKS cluster, read back from Azure as a secret."""

from __future__ import annotations

import base64

import pulumi
import pulumi_azure_native as azure


def aks_kubeconfig(
    resource_group_name: pulumi.Input[str], cluster_name: pulumi.Input[str]
) -> pulumi.Output[str]:
    creds = azure.containerservice.list_managed_cluster_admin_credentials_output(
        resource_group_name=resource_group_name, resource_name=cluster_name
    )
    return pulumi.Output.secret(
        creds.kubeconfigs.apply(lambda kcs: base64.b64decode(kcs[0].value).decode())
    )
