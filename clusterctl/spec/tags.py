"""The tags every resource carries, so teardown can prove it left nothing."""

from __future__ import annotations

from clusterctl.constants import CLUSTER_TAG, STACK_TAG
from clusterctl.spec.model import ClusterSpec

# Kubernetes label keys cannot hold ':'; the same two facts as labels.
STACK_LABEL = "gpu-clusters/stack"
CLUSTER_LABEL = "gpu-clusters/cluster"


def cloud_tags(spec: ClusterSpec, stack: str, **extra: str) -> dict[str, str]:
    return {**spec.tags, **extra, STACK_TAG: stack, CLUSTER_TAG: spec.name}


def k8s_labels(spec: ClusterSpec, stack: str) -> dict[str, str]:
    return {STACK_LABEL: stack, CLUSTER_LABEL: spec.name}
