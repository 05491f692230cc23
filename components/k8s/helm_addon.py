"""HelmAddonRelease: one pinned Helm chart in its own (labelled) namespace."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from clusterctl.spec.kubernetes_addons import HelmAddon

SHARED_NAMESPACES = {"kube-system", "default"}


class HelmAddonRelease(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        addon: HelmAddon,
        labels: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:k8s:HelmAddonRelease", name, None, opts)
        depends: list[pulumi.Resource] = []
        if addon.namespace not in SHARED_NAMESPACES:
            ns_labels = dict(labels)
            if addon.privileged_namespace:
                ns_labels["pod-security.kubernetes.io/enforce"] = "privileged"
            self.namespace = k8s.core.v1.Namespace(
                f"{name}-ns",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=addon.namespace, labels=ns_labels),
                opts=pulumi.ResourceOptions(parent=self),
            )
            depends.append(self.namespace)
        pin = addon.pin
        self.release = k8s.helm.v3.Release(
            name,
            name=addon.release,
            chart=pin.chart,
            version=pin.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=pin.repo) if pin.repo else None,
            namespace=addon.namespace,
            values=addon.values,
            # GPU nodes can take up to 20 minutes before the operators' pods are ready.
            timeout=1800,
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends),
        )
        self.register_outputs(
            {"release": addon.release, "chart": pin.chart, "version": pin.version}
        )
