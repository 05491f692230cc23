"""The Kubernetes objects a GPU cluster gets, as text: manifests, the NCCL MPIJob, Helm values.

The Pulumi add-on layer (components/k8s/) installs exactly what these functions describe, and
`clusterctl plan --out DIR` writes the same text under DIR/k8s/, so what a reviewer reads is what
the cluster gets. The data behind them is clusterctl/spec/kubernetes.py.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from clusterctl.render.engine import render_template
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.kubernetes import (
    FALLBACK_DOCA_DRIVER,
    FALLBACK_SRIOV_DEVICE_PLUGIN,
    GPU_TOLERATION,
    IB_RESOURCE,
    PEERMEM_LOADER_IMAGE,
    VALIDATION_NAMESPACE,
    HelmAddon,
    fabric_kind,
    helm_addons,
    nccl_launcher,
    node_labels,
    worker_resources,
)
from clusterctl.spec.model import ClusterSpec


def _labels(spec: ClusterSpec, stack: str) -> dict[str, str]:
    from clusterctl.spec.tags import k8s_labels  # plain data; no provider import

    return k8s_labels(spec, stack)


def cluster_manifests(spec: ClusterSpec, stack: str, cat: Catalog | None = None) -> dict[str, str]:
    """Manifests the program applies after the charts: {file name: YAML text}."""
    cat = cat or catalog()
    labels = _labels(spec, stack)
    kinds = {fabric_kind(p, cat) for p in spec.partitions}
    files = {
        "namespace-nccl-tests.yaml": render_template(
            "k8s/namespace.yaml.j2", namespace=VALIDATION_NAMESPACE, labels=labels, privileged=False
        )
    }
    if "infiniband" in kinds:
        files["nic-cluster-policy.yaml"] = render_template(
            "k8s/nic-cluster-policy.yaml.j2",
            labels=labels,
            tolerations=[GPU_TOLERATION],
            doca_version=FALLBACK_DOCA_DRIVER,
            sriov_version=FALLBACK_SRIOV_DEVICE_PLUGIN,
            sriov_config=json.dumps(
                {
                    "resourceList": [
                        {
                            "resourcePrefix": IB_RESOURCE.split("/")[0],
                            "resourceName": IB_RESOURCE.split("/")[1],
                            "selectors": {
                                "vendors": ["15b3"],
                                "linkTypes": ["infiniband"],
                                "isRdma": True,
                            },
                        }
                    ]
                },
                indent=2,
            ),
        )
    if "infiniband" in kinds and spec.kubernetes.gpu_driver == "managed":
        files["nvidia-peermem-loader.yaml"] = render_template(
            "k8s/nvidia-peermem-loader.yaml.j2",
            labels=labels,
            tolerations=[GPU_TOLERATION],
            image=PEERMEM_LOADER_IMAGE,
        )
    if spec.kubernetes.kueue:
        files["kueue-queues.yaml"] = render_template(
            "k8s/kueue-queues.yaml.j2",
            labels=labels,
            namespace=VALIDATION_NAMESPACE,
            partitions=[
                {
                    "name": p.name,
                    "labels": node_labels(p),
                    "resources": {
                        k: v * p.nodes
                        for k, v in worker_resources(p, cat).items()
                        if isinstance(v, int)
                    },
                }
                for p in spec.partitions
            ],
        )
    return files


def nccl_mpijob(spec: ClusterSpec, stack: str, cat: Catalog | None = None) -> str:
    """The NCCL all_reduce_perf MPIJob that `clusterctl validate` launches (not applied by up)."""
    cat = cat or catalog()
    launcher = nccl_launcher(spec, stack, cat)
    nccl = spec.validation.nccl
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    env.update(launcher["env"])
    return render_template(
        "k8s/nccl-tests-mpijob.yaml.j2",
        launcher=launcher,
        env=env,
        labels=_labels(spec, stack),
        ranks=launcher["workers"] * launcher["slotsPerWorker"],
        min_bytes=nccl.min_bytes,
        max_bytes=nccl.max_bytes,
        kueue_queue="nccl-tests" if spec.kubernetes.kueue else None,
    )


def values_file(addon: HelmAddon) -> str:
    pin = addon.pin
    repo = f" --repo {pin.repo}" if pin.repo else ""
    header = (
        f"# Helm values of release '{addon.release}' in namespace '{addon.namespace}':\n"
        f"#   helm upgrade --install {addon.release} {pin.chart}{repo} --version {pin.version} \\\n"
        f"#     -n {addon.namespace} --create-namespace -f {addon.release}.values.yaml\n"
    )
    return header + yaml.safe_dump(addon.values, sort_keys=True, default_flow_style=False)


def load_manifest_docs(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def render_k8s_bundle(spec: ClusterSpec, stack: str) -> dict[str, str]:
    """Every manifest and Helm values file the cluster gets, keyed by path under k8s/."""
    if spec.scheduler != "kubernetes":
        return {}
    cat = catalog()
    files = {
        f"manifests/{name}": text for name, text in cluster_manifests(spec, stack, cat).items()
    }
    files["validation/nccl-tests-mpijob.yaml"] = nccl_mpijob(spec, stack, cat)
    for addon in helm_addons(spec, cat):
        files[f"helm/{addon.release}.values.yaml"] = values_file(addon)
    return files
