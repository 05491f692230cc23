"""Defaults the spec leaves open: the head node's and the jump host's VM types."""

from __future__ import annotations

from clusterctl.spec.model import ClusterSpec

DEFAULT_HEAD_SKU = {"azure": "Standard_D8s_v5", "aws": "m6i.2xlarge"}
JUMP_HOST_SKU = "Standard_D4s_v5"


def head_sku(spec: ClusterSpec) -> str:
    return spec.head_node.sku or DEFAULT_HEAD_SKU[spec.cloud]
