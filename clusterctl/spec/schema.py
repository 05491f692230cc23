"""JSON Schema of a stack file, for editors (yaml-language-server) and CI: the cluster object
under `config: gpu-clusters:cluster`, the rest of a Pulumi stack file left open."""

from __future__ import annotations

from typing import Any

from clusterctl.spec.model import CONFIG_KEY, ClusterSpec


def cluster_schema() -> dict[str, Any]:
    schema = ClusterSpec.model_json_schema(by_alias=True)
    schema["title"] = CONFIG_KEY
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def stack_schema() -> dict[str, Any]:
    """The whole stack file: a modeline at its top applies this, so the editor checks the cluster
    object where it is and leaves Pulumi's own keys (other providers' config, secrets) alone."""
    cluster = cluster_schema()
    defs = cluster.pop("$defs", {})
    schema = cluster.pop("$schema")
    return {
        "$schema": schema,
        "title": f"Pulumi stack file with a {CONFIG_KEY} object",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": {CONFIG_KEY: cluster},
                "required": [CONFIG_KEY],
            }
        },
        "required": ["config"],
        "$defs": defs,
    }
