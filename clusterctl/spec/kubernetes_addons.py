"""The Kubernetes cluster's add-ons: the pinned Helm releases (chart, version, values) and the
MPI Operator manifest, from the spec and config/versions.yaml. Pure data; components/k8s/ installs
them and `plan --out` writes them under k8s/."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from clusterctl.platform import cloud_of
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.kubernetes import (
    AUTOSCALER_IDLE_MINUTES,
    CLUSTER_AUTOSCALER_NAMESPACE,
    CLUSTER_AUTOSCALER_SERVICE_ACCOUNT,
    DEVICE_PLUGIN_CONFIGMAP,
    FALLBACK_DOCA_DRIVER,
    FALLBACK_SRIOV_DEVICE_PLUGIN,
    MIG_PARTED_CONFIGMAP,
    MIG_STRATEGY,
    NODE_PROVISION_MINUTES,
    PARTITION_LABEL,
    cluster_gpu_tolerations,
    eks_cluster_name,
    fabric_kind,
    kubernetes_version,
    sharing_config_name,
)
from clusterctl.spec.model import ClusterSpec, PartitionSpec


@dataclass(frozen=True)
class ChartPin:
    repo: str | None
    """Helm repository URL; None when `chart` is an oci:// reference."""
    chart: str
    version: str


# Used only where config/versions.yaml has no `helm.<name>` entry. Sources: each project's
# Chart.yaml at the tag (NVIDIA/gpu-operator, NVIDIA/k8s-device-plugin, aws/eks-charts
# stable/aws-efa-k8s-device-plugin, Mellanox/network-operator, kubernetes-sigs/kueue,
# NVIDIA/dcgm-exporter); gpu-operator v26.3.3 with network-operator 26.4 is the pair
# Azure/aks-rdma-infiniband documents for ND H100 v5.
FALLBACK_CHARTS: dict[str, ChartPin] = {
    "gpu-operator": ChartPin("https://helm.ngc.nvidia.com/nvidia", "gpu-operator", "v26.3.3"),
    "nvidia-device-plugin": ChartPin(
        "https://nvidia.github.io/k8s-device-plugin", "nvidia-device-plugin", "0.19.3"
    ),
    "aws-efa-k8s-device-plugin": ChartPin(
        "https://aws.github.io/eks-charts", "aws-efa-k8s-device-plugin", "v0.5.30"
    ),
    "network-operator": ChartPin(
        "https://helm.ngc.nvidia.com/nvidia", "network-operator", "26.4.1"
    ),
    "kueue": ChartPin(None, "oci://registry.k8s.io/kueue/charts/kueue", "0.19.2"),
    "dcgm-exporter": ChartPin(
        "https://nvidia.github.io/dcgm-exporter/helm-charts", "dcgm-exporter", "4.8.2"
    ),
    "cluster-autoscaler": ChartPin(
        "https://kubernetes.github.io/autoscaler", "cluster-autoscaler", "9.59.0"
    ),
    "prometheus": ChartPin(
        "https://prometheus-community.github.io/helm-charts", "prometheus", "29.27.0"
    ),
}
FALLBACK_CLUSTER_AUTOSCALER_IMAGE = "v1.35.0"
"""kubernetes/autoscaler chart 9.59.0's appVersion; used only where versions.yaml has no
helmCharts.clusterAutoscaler.imageTag."""
FALLBACK_MPI_OPERATOR = "v0.8.0"
"""kubeflow/mpi-operator ships no Helm chart; its release manifest (MPIJob v2beta1) is applied
from the sha256-checked copy in config/ (clusterctl/render/vendored.py)."""


@dataclass(frozen=True)
class HelmAddon:
    """One Helm release: what `helm upgrade --install` would be told."""

    release: str
    namespace: str
    pin: ChartPin
    values: dict[str, Any]
    privileged_namespace: bool = False
    """Pod Security `enforce=privileged` on the namespace: driver and device-plugin pods need it."""


def chart_pins(cat: Catalog) -> dict[str, ChartPin]:
    """config/versions.yaml `helmCharts` (gpuOperator -> gpu-operator), else FALLBACK_CHARTS."""
    pins = dict(FALLBACK_CHARTS)
    for key, entry in (cat.versions.get("helmCharts") or {}).items():
        if not isinstance(entry, dict) or not entry.get("version"):
            continue
        name = re.sub(r"(?<!^)(?=[A-Z])", "-", key).lower()
        base = pins.get(name)
        chart = entry.get("chart", base.chart.rsplit("/", 1)[-1] if base else name)
        repo = entry.get("repo", base.repo if base else None)
        if repo and repo.startswith("oci://"):  # Helm takes an OCI chart as one reference
            chart = f"{repo.rstrip('/')}/{chart}"
            repo = None
        pins[name] = ChartPin(repo=repo, chart=chart, version=str(entry["version"]))
    return pins


def network_operator_images(cat: Catalog) -> dict[str, str]:
    """The NicClusterPolicy's image tags: config/versions.yaml helmCharts.networkOperator
    .components (the operator release's own matrix), else the fallbacks of the fallback chart."""
    entry = (cat.versions.get("helmCharts") or {}).get("networkOperator") or {}
    parts = entry.get("components") or {} if isinstance(entry, dict) else {}
    fallback = {
        "docaDriver": FALLBACK_DOCA_DRIVER,
        "sriovDevicePlugin": FALLBACK_SRIOV_DEVICE_PLUGIN,
    }
    return {
        key: str((parts.get(key) or {}).get("version") or default)
        for key, default in fallback.items()
    }


def _mpi_operator(cat: Catalog) -> dict[str, Any]:
    entry = (cat.versions.get("manifests") or {}).get("mpiOperator")
    return entry if isinstance(entry, dict) else {}


def mpi_operator_version(cat: Catalog) -> str:
    return str(_mpi_operator(cat).get("version") or FALLBACK_MPI_OPERATOR)


def helm_addons(spec: ClusterSpec, stack: str, cat: Catalog | None = None) -> list[HelmAddon]:
    """The cluster's Helm releases, in install order."""
    cat = cat or catalog()
    pins = chart_pins(cat)
    kinds = {fabric_kind(p, cat) for p in spec.partitions}
    operator = spec.kubernetes.gpu_driver == "gpu-operator"
    addons: list[HelmAddon] = []
    if "infiniband" in kinds:
        addons.append(
            HelmAddon(
                "network-operator",
                "network-operator",
                pins["network-operator"],
                {
                    # NFD's default rules label Mellanox NICs (feature.node.kubernetes.io/
                    # pci-15b3.present) which the NicClusterPolicy selects on; the chart's extra
                    # NodeFeatureRules are not needed (Azure/aks-rdma-infiniband values).
                    "nfd": {"enabled": True, "deployNodeFeatureRules": False},
                    "operator": {"tolerations": cluster_gpu_tolerations(spec)},
                },
                privileged_namespace=True,
            )
        )
    if operator:
        addons.append(
            HelmAddon(
                "gpu-operator",
                "gpu-operator",
                pins["gpu-operator"],
                gpu_operator_values(spec, "infiniband" in kinds),
                privileged_namespace=True,
            )
        )
    else:
        addons.append(
            HelmAddon(
                "nvidia-device-plugin",
                "nvidia-device-plugin",
                pins["nvidia-device-plugin"],
                {
                    "tolerations": cluster_gpu_tolerations(spec),
                    "nodeSelector": {},
                    "affinity": _gpu_node_affinity(spec),
                    # AKS cut the GPUs (gpuInstanceProfile); slices are nvidia.com/mig-<profile>
                    **({"migStrategy": MIG_STRATEGY} if _mig_pools(spec) else {}),
                },
                privileged_namespace=True,
            )
        )
        if spec.kubernetes.dcgm_exporter:
            addons.append(
                HelmAddon(
                    "dcgm-exporter",
                    "dcgm-exporter",
                    pins["dcgm-exporter"],
                    {
                        "tolerations": cluster_gpu_tolerations(spec),
                        "affinity": _gpu_node_affinity(spec),
                        # the chart renders a ServiceMonitor by default, a kind nothing here
                        # installs (Prometheus Operator): helm install would stop on it
                        "serviceMonitor": {"enabled": False},
                    },
                    privileged_namespace=True,
                )
            )
    if "efa" in kinds:
        addons.append(
            HelmAddon(
                "aws-efa-k8s-device-plugin",
                "kube-system",
                pins["aws-efa-k8s-device-plugin"],
                {
                    "tolerations": [
                        *cluster_gpu_tolerations(spec),
                        {"operator": "Exists", "effect": "NoSchedule"},
                    ]
                },
            )
        )
    if spec.kubernetes.kueue:
        addons.append(HelmAddon("kueue", "kueue-system", pins["kueue"], {}))
    if cloud_of(spec.cloud).kubernetes_autoscaler_release:
        addons.append(
            HelmAddon(
                "cluster-autoscaler",
                CLUSTER_AUTOSCALER_NAMESPACE,
                pins["cluster-autoscaler"],
                cluster_autoscaler_values(spec, stack, cat),
            )
        )
    return addons


def cluster_autoscaler_image(cat: Catalog, version: str | None = None) -> str | None:
    """The autoscaler image tag for Kubernetes `version`, whose minor it must equal (the
    autoscaler's README): versions.yaml helmCharts.clusterAutoscaler.imageTags[version], or
    imageTag where its minor is `version`; None where none is pinned (rules_k8s refuses that).
    Without `version`: imageTag."""
    entry = (cat.versions.get("helmCharts") or {}).get("clusterAutoscaler") or {}
    default = str(entry.get("imageTag") or FALLBACK_CLUSTER_AUTOSCALER_IMAGE)
    if version is None:
        return default
    tags = {str(k): str(v) for k, v in (entry.get("imageTags") or {}).items()}
    tags.setdefault(".".join(default.lstrip("v").split(".")[:2]), default)
    return tags.get(version)


def cluster_autoscaler_values(spec: ClusterSpec, stack: str, cat: Catalog) -> dict[str, Any]:
    """The EKS cluster autoscaler: finds the node groups by the tags EKS puts on their Auto
    Scaling groups, and signs in to AWS through EKS Pod Identity (its service account's role,
    components/aws/cluster_autoscaler.py), never through the node's role."""
    return {
        "cloudProvider": "aws",
        "awsRegion": spec.region,
        "autoDiscovery": {"clusterName": eks_cluster_name(spec, stack)},
        "image": {
            "tag": cluster_autoscaler_image(cat, kubernetes_version(spec, cat))
            or cluster_autoscaler_image(cat)
        },
        "rbac": {"serviceAccount": {"name": CLUSTER_AUTOSCALER_SERVICE_ACCOUNT}},
        "extraArgs": {
            "scale-down-unneeded-time": f"{AUTOSCALER_IDLE_MINUTES}m",
            # A GPU node with EFA and a RAID of its NVMe can take longer than the default 15
            # minutes to turn Ready; the autoscaler would give the node up as failed.
            "max-node-provision-time": f"{NODE_PROVISION_MINUTES}m",
        },
    }


def gpu_operator_values(spec: ClusterSpec, infiniband: bool) -> dict[str, Any]:
    values: dict[str, Any] = {
        "daemonsets": {"tolerations": cluster_gpu_tolerations(spec)},
        # No Prometheus Operator here: the ServiceMonitor's CRD is absent (Prometheus finds the
        # exporter by its Service, clusterctl/render/monitoring_k8s.py).
        "dcgmExporter": {
            "enabled": spec.kubernetes.dcgm_exporter,
            "serviceMonitor": {"enabled": False},
        },
        **gpu_sharing_values(spec),
        "vgpuDeviceManager": {"enabled": False},
        "vfioManager": {"enabled": False},
        "sandboxDevicePlugin": {"enabled": False},
    }
    if cloud_of(spec.cloud).kubernetes_driver_in_image:
        # The EKS NVIDIA AMI (AL2023_x86_64_NVIDIA) already carries the driver and the toolkit.
        values["driver"] = {"enabled": False}
        values["toolkit"] = {"enabled": False}
    else:
        # AKS node pool made with gpuProfile.driver=None: the operator owns the driver, and
        # with the Network Operator's DOCA driver loads nvidia-peermem for GPUDirect RDMA.
        # No automatic driver upgrade (it evicts GPU pods at any hour): a new driver reaches a
        # node when AKS reimages it in the maintenance window (components/azure/aks_maintenance).
        values["driver"] = {
            "enabled": True,
            "rdma": {"enabled": infiniband},
            "upgradePolicy": {"autoUpgrade": False},
        }
        if infiniband:
            values["nfd"] = {"enabled": False}  # the Network Operator already runs NFD
    return values


def _mig_pools(spec: ClusterSpec) -> list[PartitionSpec]:
    return [p for p in spec.partitions if p.sharing and p.sharing.mig]


def _shard_pools(spec: ClusterSpec) -> list[PartitionSpec]:
    return [p for p in spec.partitions if p.sharing and p.sharing.shards]


def mig_parted_config(spec: ClusterSpec) -> dict[str, Any]:
    """The MIG manager's mig-parted config (NVIDIA/mig-parted, `version: v1`, `mig-configs`): the
    default `all-disabled` and one config per MIG pool, its layout on every GPU, which the pool's
    nodes name in their `nvidia.com/mig.config` label."""
    configs: dict[str, Any] = {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
    for part in _mig_pools(spec):
        assert part.sharing is not None
        configs[sharing_config_name(part)] = [
            {"devices": "all", "mig-enabled": True, "mig-devices": dict(part.sharing.mig)}
        ]
    return {"version": "v1", "mig-configs": configs}


def device_plugin_configs(spec: ClusterSpec) -> dict[str, dict[str, Any]]:
    """The device plugin's configs (NVIDIA/k8s-device-plugin config `version: v1`): `default` with
    no sharing, and per shards pool time-slicing of `nvidia.com/gpu` with `replicas` = shards, so
    up to that many pods share one whole GPU; each pool's nodes name theirs in their
    `nvidia.com/device-plugin.config` label."""
    flags = {"migStrategy": MIG_STRATEGY if _mig_pools(spec) else "none"}
    configs: dict[str, dict[str, Any]] = {"default": {"version": "v1", "flags": flags}}
    for part in _shard_pools(spec):
        assert part.sharing is not None
        configs[sharing_config_name(part)] = {
            "version": "v1",
            "flags": flags,
            "sharing": {
                "timeSlicing": {
                    "resources": [{"name": "nvidia.com/gpu", "replicas": part.sharing.shards}]
                }
            },
        }
    return configs


def gpu_sharing_values(spec: ClusterSpec) -> dict[str, Any]:
    """The GPU Operator's MIG manager and device plugin config for pools with `sharing`: the
    chart makes both ConfigMaps from these values (templates/mig_config.yaml,
    plugin_config.yaml) and the ClusterPolicy names them. No sharing: the MIG manager off."""
    values: dict[str, Any] = {"migManager": {"enabled": False}}
    if _mig_pools(spec):
        values["mig"] = {"strategy": MIG_STRATEGY}
        values["migManager"] = {
            "enabled": True,
            # On a cloud VM (passthrough GPUs) enabling MIG mode may need the node rebooted
            # (NVML_ERROR_RESET_REQUIRED); without this the node stays at mig.config.state=failed
            # (NVIDIA "GPU Operator with MIG": "In a CSP environment ... WITH_REBOOT ... true").
            "env": [{"name": "WITH_REBOOT", "value": "true"}],
            "config": {
                "name": MIG_PARTED_CONFIGMAP,
                "create": True,
                "default": "all-disabled",
                "data": {"config.yaml": _yaml(mig_parted_config(spec))},
            },
        }
    if _shard_pools(spec):
        values["devicePlugin"] = {
            "config": {
                "name": DEVICE_PLUGIN_CONFIGMAP,
                "create": True,
                "default": "default",
                "data": {k: _yaml(v) for k, v in device_plugin_configs(spec).items()},
            }
        }
    return values


def _yaml(doc: dict[str, Any]) -> str:
    return str(yaml.safe_dump(doc, sort_keys=False))


def _gpu_node_affinity(spec: ClusterSpec) -> dict[str, Any]:
    names = [p.name for p in spec.partitions]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": PARTITION_LABEL, "operator": "In", "values": names}
                        ]
                    }
                ]
            }
        }
    }
