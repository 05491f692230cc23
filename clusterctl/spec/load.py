"""Turn a raw `gpu-clusters:cluster` mapping into a ClusterSpec, or one clear line per problem."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ValidationError

from clusterctl.errors import Finding, SpecError
from clusterctl.platform import applies
from clusterctl.spec import rules, rules_aws, rules_input, rules_k8s, rules_team
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.model import CONFIG_KEY, ClusterSpec, field_path
from clusterctl.spec.stackfile import apply_overrides, read_stack_config

# Every rule, in the order they report: the list is the registry (no import side effects).
RULES = (*rules.RULES, *rules_input.RULES, *rules_k8s.RULES, *rules_aws.RULES, *rules_team.RULES)


def load_spec(raw: Any, cat: Catalog | None = None) -> tuple[ClusterSpec, list[Finding]]:
    """Validate; raise SpecError listing every error, else return the spec and its warnings."""
    cat = cat or catalog()
    if not isinstance(raw, dict):
        raise SpecError([Finding("error", "must be a mapping of cluster settings", field_path())])
    try:
        spec = ClusterSpec.model_validate(raw)
    except ValidationError as exc:
        details: list[dict[str, Any]] = [dict(e) for e in exc.errors(include_url=False)]
        # A list whose items failed also reports "too short"; the item errors say it better.
        details = [
            e
            for e in details
            if not (
                e["type"] == "too_short"
                and any(
                    len(o["loc"]) > len(e["loc"]) and o["loc"][: len(e["loc"])] == e["loc"]
                    for o in details
                )
            )
        ]
        raise SpecError([_explain(e, raw) for e in details]) from None
    findings = check_rules(spec, cat)
    errors = [f for f in findings if f.level == "error"]
    if errors:
        raise SpecError(errors)
    return spec, findings


def check_rules(spec: ClusterSpec, cat: Catalog) -> list[Finding]:
    return [f for r in RULES if applies(r, spec.cloud, spec.scheduler) for f in r(spec, cat)]


def load_stack_spec(
    stack: str, overrides: list[str] | None = None
) -> tuple[ClusterSpec, list[Finding]]:
    """Read the stack file, apply `--set` overrides, validate."""
    config = read_stack_config(stack)
    raw = apply_overrides(config[CONFIG_KEY], overrides or [])
    spec, findings = load_spec(raw)
    from clusterctl.spec.provider_config import provider_findings

    problems = provider_findings(config, spec)
    if any(p.level == "error" for p in problems):
        raise SpecError([p for p in problems if p.level == "error"])
    return spec, findings + problems


def _explain(err: dict, raw: dict) -> Finding:
    loc = tuple(err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        parent, key = loc[:-1], loc[-1]
        hint = _suggest(str(key), _known_keys(parent, raw))
        msg = f"unknown key '{key}'" + (f"; did you mean '{hint}'?" if hint else "; remove it")
        return Finding("error", msg, field_path(*loc))
    if kind == "missing":
        return Finding("error", "is required but missing", field_path(*loc))
    msg = err["msg"]
    if kind == "value_error":
        msg = msg.removeprefix("Value error, ")
    elif kind == "string_pattern_mismatch":
        msg = f"'{err.get('input')}' has the wrong form ({_pattern_hint(loc)})"
    return Finding("error", msg, field_path(*loc))


def _pattern_hint(loc: tuple) -> str:
    last = loc[-1] if loc else ""
    return {
        "name": "lowercase letters and digits; a partition name is at most 15 characters, a "
        "cluster name 3-24 with dashes",
        "region": "a region name like eastus or us-east-1",
        "adminUser": "a Linux user name like azureuser",
        "drainPrefix": "a short word ending in ':', like gpucl:",
    }.get(str(last), "see the JSON Schema in config/stack.schema.json")


def _known_keys(parent: tuple, raw: dict) -> list[str]:
    model: type[BaseModel] | None = ClusterSpec
    for part in parent:
        if model is None or isinstance(part, int):
            continue
        field = next(
            (f for n, f in model.model_fields.items() if (f.alias or n) == part or n == part),
            None,
        )
        model = _model_of(field.annotation) if field else None
    if model is None:
        return []
    return [f.alias or n for n, f in model.model_fields.items()]


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found:
            return found
    return None


def _suggest(word: str, options: list[str]) -> str | None:
    lowered = {o.lower(): o for o in options}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None
