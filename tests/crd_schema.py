"""A small structural-schema validator for custom resources, against the vendored CRDs in
tests/data/crds/ (the pinned operator versions, see SOURCES.md there).

kubernetes-validate knows only the built-in kinds; the API server checks a custom resource against
its CRD's `openAPIV3Schema`. This does what that check does for the parts our objects use:
- types (with `x-kubernetes-int-or-string`), `required`, `enum`, `items`, `anyOf`/`oneOf`,
  string length, numeric minimum/maximum;
- unknown fields (pruned by the server, refused with fieldValidation=Strict; refused here unless
  `x-kubernetes-preserve-unknown-fields` or `additionalProperties` allows them);
- `x-kubernetes-list-type: map` (every key present, no two items with the same keys) and `set`.
CEL rules (`x-kubernetes-validations`) are not evaluated; tests check the one that matters to us
by hand (ClusterQueue: as many resources per flavor as covered).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

CRD_DIR = Path(__file__).resolve().parent / "data" / "crds"

_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


@cache
def crds() -> dict[tuple[str, str], dict[str, Any]]:
    """(group, kind) -> the CRD document, for every vendored CRD."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                spec = doc["spec"]
                found[(spec["group"], spec["names"]["kind"])] = doc
    return found


def schema_for(api_version: str, kind: str) -> dict[str, Any] | None:
    """The openAPIV3Schema of a served version, or None when no vendored CRD has the kind."""
    group, _, version = api_version.rpartition("/")
    crd = crds().get((group, kind))
    if crd is None:
        return None
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            if not v.get("served", False):
                raise ValueError(f"{api_version} {kind}: version not served")
            return v["schema"]["openAPIV3Schema"]
    raise ValueError(f"{api_version} {kind}: the CRD serves no version {version!r}")


def validate(doc: dict[str, Any]) -> list[str]:
    """Problems of one object against its CRD; ValueError when the CRD or version is unknown."""
    schema = schema_for(doc.get("apiVersion", ""), doc.get("kind", ""))
    if schema is None:
        raise ValueError(f"no vendored CRD for {doc.get('apiVersion')} {doc.get('kind')}")
    body = {k: v for k, v in doc.items() if k != "metadata"}  # metadata: ObjectMeta, not in CRDs
    problems = check(body, {**schema, "properties": {**schema.get("properties", {})}}, "$")
    if not isinstance(doc.get("metadata", {}).get("name"), str):
        problems.append("$.metadata.name: missing")
    return problems


def _type_ok(value: Any, schema: dict[str, Any]) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, int | str) and not isinstance(value, bool)
    t = schema.get("type")
    if t is None:
        return True
    if value is None:
        return bool(schema.get("nullable"))
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES[t])


def check(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    if not _type_ok(value, schema):
        want = "int-or-string" if schema.get("x-kubernetes-int-or-string") else schema.get("type")
        return [f"{path}: {json.dumps(value)[:60]} is not {want}"]
    if value is None:
        return []
    problems: list[str] = []
    for key in ("anyOf", "oneOf"):
        # anyOf branches in CRDs mostly narrow int-or-string quantities: their type is checked
        branches = schema.get(key)
        if (
            branches
            and not schema.get("x-kubernetes-int-or-string")
            and not any(not check(value, s, path) for s in branches)
        ):
            problems.append(f"{path}: matches none of {key}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path}: longer than {schema['maxLength']}")
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{path}: shorter than {schema['minLength']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path}: {value} below minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path}: {value} above maximum {schema['maximum']}")
    if isinstance(value, dict):
        problems += _check_object(value, schema, path)
    if isinstance(value, list):
        problems += _check_array(value, schema, path)
    return problems


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    problems = [f"{path}.{k}: required" for k in schema.get("required", []) if k not in value]
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields", False)
    embedded = schema.get("x-kubernetes-embedded-resource", False)
    for key, sub in value.items():
        where = f"{path}.{key}"
        if key in props:
            problems += check(sub, props[key], where)
        elif isinstance(extra, dict):
            problems += check(sub, extra, where)
        elif extra is True or preserve or (embedded and key in ("apiVersion", "kind", "metadata")):
            continue
        elif key == "metadata" and path.endswith(".template"):
            continue  # PodTemplateSpec.metadata: CRDs leave it `type: object`
        else:
            problems.append(f"{where}: unknown field")
    return problems


def _check_array(value: list[Any], schema: dict[str, Any], path: str) -> list[str]:
    problems: list[str] = []
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            problems += check(item, items, f"{path}[{i}]")
    for bound, op in (("maxItems", int.__gt__), ("minItems", int.__lt__)):
        if bound in schema and op(len(value), schema[bound]):
            problems.append(f"{path}: {len(value)} items, {bound} {schema[bound]}")
    kind = schema.get("x-kubernetes-list-type")
    if kind == "map":
        keys = schema.get("x-kubernetes-list-map-keys", [])
        seen: dict[tuple[Any, ...], int] = {}
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            props = (items or {}).get("properties", {})
            missing = [k for k in keys if k not in item and "default" not in props.get(k, {})]
            if missing:
                problems.append(f"{path}[{i}]: list-map key {missing} missing")
                continue
            key = tuple(item.get(k) for k in keys)
            if key in seen:
                shown = ", ".join(f"{k}={v}" for k, v in zip(keys, key, strict=True))
                problems.append(
                    f"{path}[{i}]: duplicate list-map key {shown} (first at [{seen[key]}])"
                )
            seen.setdefault(key, i)
    elif kind == "set":
        dumped = [json.dumps(v, sort_keys=True) for v in value]
        if len(set(dumped)) != len(dumped):
            problems.append(f"{path}: duplicate items in a list-type set")
    return problems
