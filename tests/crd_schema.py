"""A small structural-schema validator for custom resources, against the vendored CRDs in
tests/data/crds/ (the pinned operator versions, see SOURCES.md there).

kubernetes-validate knows only the built-in kinds; the API server checks a custom resource against
its CRD's `openAPIV3Schema`. This does what that check does for the parts our objects use:
- types (with `x-kubernetes-int-or-string`), `required`, `enum`, `items`, `anyOf`/`oneOf`,
  string length, numeric minimum/maximum;
- unknown fields (pruned by the server, refused with fieldValidation=Strict; refused here unless
  `x-kubernetes-preserve-unknown-fields` or `additionalProperties` allows them);
- `x-kubernetes-list-type: map` (every key present, no two items with the same keys) and `set`;
- the CEL rules (`x-kubernetes-validations`) of every node the object has, evaluated with
  cel-python (`celpy`) the way the API server evaluates them on a create: see "CEL rules" below.
"""

from __future__ import annotations

import base64
import copy
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import celpy
import lark
import yaml
from celpy import celtypes

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
    problems = check(body, schema, "$", metadata=doc.get("metadata") or {})
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


def check(
    value: Any, schema: dict[str, Any], path: str, *, metadata: dict[str, Any] | None = None
) -> list[str]:
    """Problems of `value` against `schema`: the structural check, then the CEL rules.

    `schema` is the root of a resource (`metadata`: the object's, which CRD schemas leave out) or
    any node below one (then `metadata` is None)."""
    problems = _structural(value, schema, path)
    return problems + [r.problem for r in cel_results(value, schema, path, metadata) if r.problem]


def _structural(value: Any, schema: dict[str, Any], path: str) -> list[str]:
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
            and not any(not _structural(value, s, path) for s in branches)
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
            problems += _structural(sub, props[key], where)
        elif isinstance(extra, dict):
            problems += _structural(sub, extra, where)
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
            problems += _structural(item, items, f"{path}[{i}]")
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


# -- CEL rules (x-kubernetes-validations) -------------------------------------------------------
#
# What the API server does on a create (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel
# validation.go, k8s.io/apiserver pkg/cel/common schemas.go, escaping.go), and so this does:
# - the object is defaulted first (schema `default`s fill absent fields, nested defaults too), so a
#   rule sees the defaulted object: has(self.x) is true for a defaulted x;
# - every rule of a node (and of its allOf branches) runs when the object has that node and it is
#   not null, with `self` bound to the node's value. has(self.x) is true when x is present; reading
#   an absent field is an error ("no such key"), which refuses the object like a false rule;
# - `self` shows only what the schema declares: properties with a type (names escaped: `a-b` ->
#   `a__dash__b`, `namespace` -> `__namespace__`, ...); an object with
#   x-kubernetes-preserve-unknown-fields shows no undeclared field (the server refuses such a rule
#   when the CRD is created); x-kubernetes-int-or-string is dyn (int or string); at the root of a
#   resource (and of an x-kubernetes-embedded-resource) apiVersion, kind, metadata.name and
#   metadata.generateName are visible; strings of format byte/duration/date/date-time are bytes,
#   duration and timestamp;
# - a rule that references oldSelf is a transition rule: skipped on a create, since there is no old
#   object; with optionalOldSelf it would run with oldSelf = optional.none() (not implemented here:
#   such a rule fails the check);
# - false -> the messageExpression's value, else `message`, else "failed rule: <rule>", at the
#   node's path plus `fieldPath`; an evaluation error -> "<error> evaluating rule: <message>".
# Only the standard functions and macros the reached rules need are allowed (CEL_FUNCTIONS). A rule
# calling anything else (the Kubernetes libraries: lowerAscii, split, isSorted, quantity, url, ip,
# optional types...) or using `==`/`+` on x-kubernetes-list-type set/map lists (which compare
# unordered/by key in Kubernetes) fails the check with a message naming the rule: never a silent
# pass. Cost budgets are not modelled.

# Standard CEL macros and functions whose cel-python behaviour matches cel-go for our values.
CEL_FUNCTIONS = frozenset(
    {"has", "all", "exists", "exists_one", "map", "filter", "size", "contains", "startsWith",
     "endsWith", "matches"}
)  # fmt: skip
_CEL_RESERVED = frozenset(
    {"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
     "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}
)  # fmt: skip
_CALLS = ("ident_arg", "member_dot_arg", "dot_ident_arg")


@dataclass(frozen=True)
class CelResult:
    """One rule at one node of one object: outcome is "pass", "fail", "error" (evaluation error),
    "unsupported" (not evaluated: fails the check) or "skipped" (a transition rule on a create)."""

    path: str
    rule: str
    message: str
    outcome: str
    detail: str = ""

    @property
    def problem(self) -> str | None:
        return None if self.outcome in ("pass", "skipped") else f"{self.path}: {self.detail}"


@dataclass(frozen=True)
class _Compiled:
    program: Any
    uses_old_self: bool
    unsupported: tuple[str, ...]
    error: str


@cache
def _compile(expr: str) -> _Compiled:
    env = celpy.Environment()
    try:
        tree = env.compile(expr)
    except celpy.CELParseError:  # e.g. optional field selection `self.?x` (cel-go 0.17+)
        return _Compiled(None, False, (), "cel-python cannot parse it")
    calls, old_self = set(), False
    for node in tree.iter_subtrees():
        names = [c.value for c in node.children if isinstance(c, lark.Token)]
        if node.data in _CALLS and names:
            args = [c for c in node.children if isinstance(c, lark.Tree) and c.data == "exprlist"]
            arity = len(args[0].children) if args else 0
            calls.add(f"{names[0]}/{arity}" if names[0] == "map" and arity != 2 else names[0])
        elif node.data in ("ident", "dot_ident") and names == ["oldSelf"]:
            old_self = True
    return _Compiled(env.program(tree), old_self, tuple(sorted(calls - CEL_FUNCTIONS)), "")


def _escape(name: str) -> str | None:
    """A property's name in CEL (k8s.io/apiserver/pkg/cel Escape), None when it has none."""
    if not name or name[0].isdigit():
        return None
    if name in _CEL_RESERVED:
        return f"__{name}__"
    out, i = [], 0
    while i < len(name):
        c = name[i]
        if name.startswith("__", i):
            out.append("__underscores__")
            i += 2
            continue
        if c in ".-/":
            out.append({".": "__dot__", "-": "__dash__", "/": "__slash__"}[c])
        elif c.isascii() and (c.isalnum() or c == "_"):
            out.append(c)
        else:
            return None
        i += 1
    return "".join(out)


def _with_type_and_object_meta(schema: dict[str, Any]) -> dict[str, Any]:
    string = {"type": "string"}
    meta = {"type": "object", "properties": {"name": string, "generateName": string}}
    props = {**schema.get("properties", {}), "apiVersion": string, "kind": string, "metadata": meta}
    return {**schema, "properties": props}


def _exposed(schema: dict[str, Any]) -> bool:
    """Whether CEL sees a node of this schema (SchemaDeclType is not nil)."""
    if schema.get("x-kubernetes-int-or-string"):
        return True
    t = schema.get("type")
    if t == "array":
        return isinstance(schema.get("items"), dict) and _exposed(schema["items"])
    if t == "object" and isinstance(schema.get("additionalProperties"), dict):
        return _exposed(schema["additionalProperties"])
    return t in ("object", "string", "boolean", "number", "integer")


class _KeyedList(celtypes.ListType):
    """An x-kubernetes-list-type set or map list: Kubernetes compares and concatenates these
    ignoring order / by key; that is not implemented, so using it fails loudly."""

    def _refuse(self, *_: Any) -> Any:
        raise NotImplementedError(
            "==, != and + on x-kubernetes-list-type set/map lists are not implemented in "
            "tests/crd_schema.py"
        )

    __eq__ = __ne__ = __add__ = __radd__ = _refuse
    __hash__ = None  # type: ignore[assignment]


def _to_cel(value: Any, schema: dict[str, Any], resource_root: bool = False) -> Any:
    """`value` as CEL sees it through `schema` (UnstructuredToVal)."""
    if value is None:
        return None
    if schema.get("x-kubernetes-int-or-string"):
        return celtypes.IntType(value) if isinstance(value, int) else celtypes.StringType(value)
    if resource_root:
        schema = _with_type_and_object_meta(schema)
    t = schema.get("type")
    if t == "object" and isinstance(value, dict):
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            embedded = extra.get("x-kubernetes-embedded-resource", False)
            return celtypes.MapType(
                {celtypes.StringType(k): _to_cel(v, extra, embedded) for k, v in value.items()}
            )
        fields = {}
        for key, sub in schema.get("properties", {}).items():
            name = _escape(key)
            if key in value and name is not None and _exposed(sub):
                embedded = sub.get("x-kubernetes-embedded-resource", False)
                fields[celtypes.StringType(name)] = _to_cel(value[key], sub, embedded)
        return celtypes.MapType(fields)
    if t == "array" and isinstance(value, list):
        items = schema["items"]
        embedded = items.get("x-kubernetes-embedded-resource", False)
        kind = _KeyedList if schema.get("x-kubernetes-list-type") in ("set", "map") else None
        return (kind or celtypes.ListType)([_to_cel(v, items, embedded) for v in value])
    if t == "string" and isinstance(value, str):
        fmt = schema.get("format")
        if fmt == "byte":
            return celtypes.BytesType(base64.b64decode(value))
        if fmt == "duration":
            return celtypes.DurationType(value)
        if fmt in ("date", "date-time"):
            return celtypes.TimestampType(value)
    if t == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return celtypes.DoubleType(float(value))
    return celpy.json_to_cel(value)


def apply_defaults(value: Any, schema: dict[str, Any]) -> Any:
    """The API server's structural defaulting (before validation), in place; returns `value`."""
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key, sub in props.items():
            absent = key not in value or (value[key] is None and not sub.get("nullable"))
            if "default" in sub and absent:
                value[key] = copy.deepcopy(sub["default"])
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            if key in props:
                apply_defaults(sub, props[key])
            elif isinstance(extra, dict):
                apply_defaults(sub, extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        for i, item in enumerate(value):
            if item is None and "default" in items and not items.get("nullable"):
                value[i] = copy.deepcopy(items["default"])
            apply_defaults(value[i], items)
    return value


def cel_results_of(doc: dict[str, Any]) -> list[CelResult]:
    """The CEL rules one object reaches in its vendored CRD, and what each gave."""
    schema = schema_for(doc.get("apiVersion", ""), doc.get("kind", ""))
    if schema is None:
        raise ValueError(f"no vendored CRD for {doc.get('apiVersion')} {doc.get('kind')}")
    body = {k: v for k, v in doc.items() if k != "metadata"}
    return cel_results(body, schema, "$", doc.get("metadata") or {})


def cel_results(
    value: Any, schema: dict[str, Any], path: str, metadata: dict[str, Any] | None = None
) -> list[CelResult]:
    """Every CEL rule the (defaulted) object reaches, and what it gave. `metadata`: the object's,
    when `schema` is a resource root (CRD schemas declare no metadata; CEL sees name and
    generateName there)."""
    value = apply_defaults(copy.deepcopy(value), schema)
    if metadata is not None and isinstance(value, dict):
        value["metadata"] = metadata
    out: list[CelResult] = []
    _walk(value, schema, path, metadata is not None, out)
    return out


def _rules_of(schema: dict[str, Any]) -> list[dict[str, Any]]:
    rules = list(schema.get("x-kubernetes-validations", []))
    for branch in schema.get("allOf", []) or []:
        rules += branch.get("x-kubernetes-validations", [])
    return rules


def _has_rules(node: Any) -> bool:
    if isinstance(node, dict):
        return "x-kubernetes-validations" in node or any(_has_rules(v) for v in node.values())
    return isinstance(node, list) and any(_has_rules(v) for v in node)


def _nested_rules(schema: dict[str, Any]) -> bool:
    """Whether a rule sits where this does not evaluate it: in anyOf/oneOf/not, or below the top
    of an allOf branch (the server evaluates those; no CRD of ours has one)."""
    tops = [{k: v for k, v in b.items() if k != "x-kubernetes-validations"}
            for b in schema.get("allOf") or []]  # fmt: skip
    return _has_rules([tops, schema.get("anyOf"), schema.get("oneOf"), schema.get("not")])


def _walk(value: Any, schema: dict[str, Any], path: str, root: bool, out: list[CelResult]) -> None:
    if value is None:
        return
    if _nested_rules(schema):
        why = "a CEL rule inside allOf/anyOf/oneOf/not is not evaluated here"
        out.append(CelResult(path, "", "", "unsupported", why))
    rules = [rule for rule in _rules_of(schema) if rule.get("rule", "").strip()]  # empty: no-op
    if rules and not _exposed(schema):
        for r in rules:
            why = f"CEL rule {r['rule']!r} not evaluated: its schema node has no CEL type"
            out.append(CelResult(path, r["rule"], r.get("message", ""), "unsupported", why))
    elif rules:
        node = _to_cel(value, schema, root)
        out += [_evaluate(rule, node, path) for rule in rules]
    if isinstance(value, dict):
        props, extra = schema.get("properties", {}), schema.get("additionalProperties")
        for key, sub in value.items():
            below = props[key] if key in props else extra if isinstance(extra, dict) else None
            if below is not None:
                embedded = below.get("x-kubernetes-embedded-resource", False)
                _walk(sub, below, f"{path}.{key}", embedded, out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        embedded = items.get("x-kubernetes-embedded-resource", False)
        for i, item in enumerate(value):
            _walk(item, items, f"{path}[{i}]", embedded, out)


def _run(compiled: _Compiled, node: Any) -> Any:
    try:
        return compiled.program.evaluate({"self": node})
    except celpy.CELEvalError as exc:
        return exc
    except Exception as exc:  # cel-python's own limits: reported, never passed
        return celpy.CELEvalError(f"{type(exc).__name__}: {exc}")


def _evaluate(rule: dict[str, Any], node: Any, path: str) -> CelResult:
    expr, message = rule["rule"], (rule.get("message") or "").strip()
    named = message or expr.strip()
    compiled = _compile(expr)
    if compiled.uses_old_self and not rule.get("optionalOldSelf"):
        return CelResult(path, expr, message, "skipped", "transition rule (uses oldSelf)")
    why = compiled.error
    if compiled.unsupported:
        why = f"it calls {', '.join(compiled.unsupported)}, not implemented in tests/crd_schema.py"
    elif compiled.uses_old_self:
        why = "optionalOldSelf rules (oldSelf = optional.none() on a create) are not implemented"
    if why:
        return CelResult(
            path, expr, message, "unsupported", f"CEL rule {expr!r} not evaluated: {why}"
        )
    got = _run(compiled, node)
    if isinstance(got, celpy.CELEvalError):
        error = got.args[0] if got.args else str(got)
        return CelResult(path, expr, message, "error", f"{error} evaluating rule: {named}")
    if not isinstance(got, celtypes.BoolType):
        return CelResult(path, expr, message, "error", f"no bool from rule: {named} ({got!r})")
    if got:
        return CelResult(path, expr, message, "pass")
    field_path = rule.get("fieldPath", "")
    where = path + ("" if field_path[:1] in ("", ".", "[") else ".") + field_path
    return CelResult(where, expr, message, "fail", _message(rule, node) or f"failed rule: {named}")


def _message(rule: dict[str, Any], node: Any) -> str:
    """The messageExpression's value where it gives a usable one, else `message`."""
    expr = rule.get("messageExpression")
    if expr:
        compiled = _compile(expr)
        if compiled.error or compiled.unsupported or compiled.uses_old_self:
            why = compiled.error or f"calls {', '.join(compiled.unsupported) or 'oldSelf'}"
            return f"messageExpression {expr!r} not evaluated ({why}); {rule.get('message')}"
        got = _run(compiled, node)
        if isinstance(got, str) and got.strip() and "\n" not in got.strip():
            return got.strip()
    return (rule.get("message") or "").strip()
