"""Turn a raw `gpu-clusters:cluster` mapping into a ClusterSpec, or one clear line per problem."""

from __future__ import annotations

import copy
import difflib
from typing import Any

from pydantic import BaseModel, ValidationError

from clusterctl.errors import Finding, SpecError
from clusterctl.platform import applies
from clusterctl.spec import (
    rules,
    rules_aws,
    rules_input,
    rules_k8s,
    rules_sharing,
    rules_team,
)
from clusterctl.spec.catalog import Catalog, catalog
from clusterctl.spec.model import CONFIG_KEY, ClusterSpec, field_path
from clusterctl.spec.stackfile import apply_overrides, read_stack_config

# Every rule, in the order they report: the list is the registry (no import side effects).
RULES = (
    *rules.RULES,
    *rules_input.RULES,
    *rules_k8s.RULES,
    *rules_aws.RULES,
    *rules_team.RULES,
    *rules_sharing.RULES,
)


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
        structural = [_explain(e, raw) for e in details]
        raise SpecError(structural + _rules_despite(raw, details, cat)) from None
    findings = check_rules(spec, cat)
    errors = [f for f in findings if f.level == "error"]
    if errors:
        raise SpecError(errors)
    return spec, findings


def _rules_despite(
    raw: dict[str, Any], details: list[dict[str, Any]], cat: Catalog
) -> list[Finding]:
    """The rules' errors in the rest of the file, so one run reports every problem (not the
    structural ones first and the rest after they are fixed): the broken values are taken out
    (a required number stands in at its least and at its greatest allowed value, and only what
    the rules say either way is kept), the rest is validated and its rules run; what they say
    about a taken-out field is left out. [] where that cannot be done."""
    low = _rules_without(raw, details, cat, high=False)
    high = _rules_without(raw, details, cat, high=True)
    kept = {(f.field, f.message) for f in high}
    return [f for f in low if (f.field, f.message) in kept]


def _rules_without(
    raw: dict[str, Any], details: list[dict[str, Any]], cat: Catalog, *, high: bool
) -> list[Finding]:
    patched = copy.deepcopy(raw)
    removed: list[tuple[int | str, ...]] = []
    locs = [tuple(e["loc"]) for e in details]
    for _ in range(4):
        for loc in sorted(locs, key=_sort_key, reverse=True):  # later list items first
            gone = _drop(patched, loc, high)
            if gone is None:
                return []
            removed.append(gone)
        try:
            spec = ClusterSpec.model_validate(patched)
        except ValidationError as exc:
            locs = [tuple(e["loc"]) for e in exc.errors(include_url=False)]
            continue
        bad = [field_path(*loc) for loc in removed]
        return [
            f
            for f in check_rules(spec, cat)
            if f.level == "error" and not any(_related(f.field, b) for b in bad)
        ]
    return []


def _sort_key(loc: tuple[int | str, ...]) -> list[tuple[int, Any]]:
    return [(0, p) if isinstance(p, int) else (1, str(p)) for p in loc]


def _drop(node: Any, loc: tuple[int | str, ...], high: bool) -> tuple[int | str, ...] | None:
    """Take the value at `loc` out of `node`; where it is already out (a required value that is
    missing), take out the list item holding it. The location taken out, or None."""
    *parents, last = loc
    holder = node
    for i, part in enumerate(parents):
        try:
            holder = holder[part]
        except (KeyError, IndexError, TypeError):
            return None
        last_parent = i == len(parents) - 1 and isinstance(part, int)
        if last_parent and isinstance(holder, dict) and last not in holder:
            return _drop(node, tuple(parents), high)  # missing: the whole item goes
    if isinstance(holder, dict) and last in holder:
        required = _required_placeholder(loc, high)
        if required is not None:  # a required number: the smallest it may be stands in
            holder[last] = required
        else:
            del holder[last]
        return loc
    if isinstance(holder, list) and isinstance(last, int) and -len(holder) <= last < len(holder):
        del holder[last]
        return loc
    return None


def _required_placeholder(loc: tuple[int | str, ...], high: bool) -> Any:
    """For a required int or float field at `loc`: the least (or with `high` the greatest) value
    it allows (1, or 1000, where it sets none), so the rest of its item can still be checked;
    else None."""
    model: type[BaseModel] | None = ClusterSpec
    field = None
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None:
            return None
        field = next(
            (f for n, f in model.model_fields.items() if (f.alias or n) == part or n == part),
            None,
        )
        if field is None:
            return None
        model = _model_of(field.annotation)
    if field is None or not field.is_required() or field.annotation not in (int, float, "int"):
        return None
    bound, fallback = ("le", 1000) if high else ("ge", 1)
    value = next(
        (getattr(m, bound) for m in field.metadata if getattr(m, bound, None) is not None),
        fallback,
    )
    return field.annotation(value) if isinstance(field.annotation, type) else int(value)


def _related(field: str | None, bad: str) -> bool:
    """One field is the other, or inside it."""
    if field is None:
        return False
    return any(a == b or a.startswith((b + ".", b + "[")) for a, b in ((field, bad), (bad, field)))


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


def _explain(err: dict[str, Any], raw: dict[str, Any]) -> Finding:
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
    given = err.get("input")
    if kind == "value_error":
        msg = msg.removeprefix("Value error, ")
    elif kind in ("model_type", "dict_type"):  # pydantic names its class: say what to write
        msg = f"must be a mapping of settings (key: value lines), not {given!r}"
    elif kind == "too_short":
        least = (err.get("ctx") or {}).get("min_length", 1)
        msg = f"needs at least {least} item{'s' if least != 1 else ''}; the list is empty"
    elif kind == "literal_error":
        choices = [c.strip("'") for c in str((err.get("ctx") or {}).get("expected", "")).replace(
            " or ", ", ").split(", ") if c]  # fmt: skip
        same = next((c for c in choices if isinstance(given, str) and c == given.lower()), None)
        msg = (
            f"'{given}': write it '{same}' (lowercase)"
            if same
            else f"{given!r} is not one of {', '.join(choices)}"
        )
    elif kind == "string_pattern_mismatch":
        msg = f"'{err.get('input')}' has the wrong form ({_pattern_hint(loc)})"
    return Finding("error", msg, field_path(*loc))


def _pattern_hint(loc: tuple[int | str, ...]) -> str:
    last = loc[-1] if loc else ""
    return {
        "name": "lowercase letters and digits; a partition name is at most 15 characters, a "
        "cluster name 3-24 with dashes",
        "region": "a region name like eastus or us-east-1",
        "adminUser": "a Linux user name like azureuser",
        "drainPrefix": "a short word ending in ':', like gpucl:",
    }.get(str(last), "see the JSON Schema in config/stack.schema.json")


def _known_keys(parent: tuple[int | str, ...], raw: dict[str, Any]) -> list[str]:
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
