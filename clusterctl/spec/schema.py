"""JSON Schema of the stack's cluster object, for editors (yaml-language-server) and CI."""

from __future__ import annotations

from typing import Any

from clusterctl.spec.model import CONFIG_KEY, ClusterSpec


def cluster_schema() -> dict[str, Any]:
    schema = ClusterSpec.model_json_schema(by_alias=True)
    schema["title"] = CONFIG_KEY
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
