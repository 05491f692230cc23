"""KubernetesGpuAddons: the GPU and network add-ons of a GPU cluster, over a Kubernetes provider.

What it installs is decided in clusterctl/spec/kubernetes.py and clusterctl/render/kubernetes.py
(pure), so `clusterctl plan --out` writes
the very same values and manifests.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from clusterctl.render.kubernetes import cluster_manifests, load_manifest_docs
from clusterctl.render.monitoring_k8s import cluster_helm_addons
from clusterctl.render.vendored import mpi_operator_manifest
from clusterctl.spec.catalog import catalog
from clusterctl.spec.kubernetes_addons import mpi_operator_version
from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.tags import k8s_labels
from components.k8s.helm_addon import HelmAddonRelease
from components.k8s.manifest import apply_manifest
from components.k8s.mpi_operator import MpiOperator


class KubernetesGpuAddons(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        spec: ClusterSpec,
        stack: str,
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
        volumes: list[dict[str, Any]] | None = None,
    ):
        """`volumes`: objects made from cloud resources' outputs (the shared file system's
        PersistentVolume and claim), applied with the manifests once their namespace exists."""
        super().__init__("gpu-clusters:k8s:GpuAddons", name, None, opts)
        cat = catalog()
        labels = k8s_labels(spec, stack)
        child = pulumi.ResourceOptions(parent=self, provider=provider)

        addons = cluster_helm_addons(spec, stack, cat)
        self.releases: dict[str, HelmAddonRelease] = {}
        previous: list[pulumi.Resource] = []
        for addon in addons:
            # In order: the GPU Operator waits on the Network Operator's driver for RDMA.
            release = HelmAddonRelease(
                f"{name}-{addon.release}",
                addon,
                labels,
                pulumi.ResourceOptions(parent=self, providers=[provider], depends_on=previous),
            )
            self.releases[addon.release] = release
            previous = [release]

        self.mpi_operator = MpiOperator(
            f"{name}-mpi-operator",
            mpi_operator_manifest(cat),
            pulumi.ResourceOptions(parent=self, providers=[provider]),
        )

        # Custom resources need their CRDs, which the charts bring.
        after_charts = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[*self.releases.values(), self.mpi_operator])
        )
        docs = [
            doc
            for text in cluster_manifests(spec, stack, cat).values()
            for doc in load_manifest_docs(text)
        ]
        # Namespaces first: a namespaced object (topology ConfigMap, LocalQueue) needs its own.
        namespaces = [
            apply_manifest(name, d, after_charts) for d in docs if d["kind"] == "Namespace"
        ]
        after_namespaces = pulumi.ResourceOptions.merge(
            after_charts, pulumi.ResourceOptions(depends_on=namespaces)
        )
        self.manifests = namespaces + [
            apply_manifest(name, d, after_namespaces)
            for d in [*docs, *(volumes or [])]
            if d["kind"] != "Namespace"
        ]
        self.chart_versions = {a.release: a.pin.version for a in addons}
        self.chart_versions["mpi-operator"] = mpi_operator_version(cat)
        self.register_outputs({"chartVersions": self.chart_versions})
