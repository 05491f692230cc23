"""An EKS cluster's kubeconfig: short-lived tokens from `aws eks get-token`, no static secret."""

from __future__ import annotations

import json

import pulumi


def eks_kubeconfig(
    cluster_name: pulumi.Input[str],
    endpoint: pulumi.Input[str],
    certificate_authority: pulumi.Input[str],
    region: str,
) -> pulumi.Output[str]:
    def build(args: list) -> str:
        name, server, ca = args
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": name, "cluster": {"server": server, "certificate-authority-data": ca}}
                ],
                "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                "current-context": name,
                "users": [
                    {
                        "name": name,
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1beta1",
                                "command": "aws",
                                "args": [
                                    "eks",
                                    "get-token",
                                    "--cluster-name",
                                    name,
                                    "--region",
                                    region,
                                    "--output",
                                    "json",
                                ],
                            }
                        },
                    }
                ],
            },
            indent=2,
        )

    return pulumi.Output.secret(
        pulumi.Output.all(cluster_name, endpoint, certificate_authority).apply(build)
    )
