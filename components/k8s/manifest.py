"""Apply one rendered manifest as one visible resource (not a provider-side ConfigGroup).

A ConfigGroup expands inside the provider, so `clusterctl plan` and the tests could not see the
objects; a CustomResource per document keeps each object's full body in the plan.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s


def apply_manifest(
    prefix: str, doc: dict[str, Any], opts: pulumi.ResourceOptions
) -> pulumi.CustomResource:
    meta = doc["metadata"]
    parts = [prefix, doc["kind"].lower(), meta.get("namespace"), meta["name"]]
    name = "-".join(p for p in parts if p)
    body = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}
    if doc["kind"] == "Namespace":
        return k8s.core.v1.Namespace(name, metadata=meta, opts=opts)
    if doc["kind"] == "ConfigMap":
        return k8s.core.v1.ConfigMap(name, metadata=meta, data=doc.get("data"), opts=opts)
    if doc["kind"] == "StorageClass":
        return k8s.storage.v1.StorageClass(
            name,
            metadata=meta,
            provisioner=doc["provisioner"],
            parameters=doc.get("parameters"),
            volume_binding_mode=doc.get("volumeBindingMode"),
            allow_volume_expansion=doc.get("allowVolumeExpansion"),
            reclaim_policy=doc.get("reclaimPolicy"),
            opts=opts,
        )
    if doc["kind"] == "PersistentVolume":
        return k8s.core.v1.PersistentVolume(name, metadata=meta, spec=doc["spec"], opts=opts)
    if doc["kind"] == "PersistentVolumeClaim":
        return k8s.core.v1.PersistentVolumeClaim(name, metadata=meta, spec=doc["spec"], opts=opts)
    return k8s.apiextensions.CustomResource(
        name, api_version=doc["apiVersion"], kind=doc["kind"], metadata=meta, opts=opts, **body
    )
