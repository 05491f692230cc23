"""Read `stacks/Pulumi.<stack>.yaml` and apply `--set path=value` overrides, as pure functions."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

from clusterctl.errors import UserError
from clusterctl.project import find_project, stack_names
from clusterctl.spec.model import CONFIG_KEY, CONFIG_NAMESPACE

PROVIDER_NAMESPACES = ("azure-native", "aws", "kubernetes", "pulumi", "random", "tls")
_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")


def stack_path(stack: str, root: Path | None = None) -> Path:
    return (root or find_project().stack_config_dir) / f"Pulumi.{stack}.yaml"


def available_stacks(root: Path | None = None) -> list[str]:
    return stack_names(root or find_project().stack_config_dir)


def read_stack_config(stack: str, root: Path | None = None) -> dict[str, Any]:
    """The stack file's `config:` mapping; unknown gpu-clusters:* keys are errors."""
    path = stack_path(stack, root)
    if not path.is_file():
        names = ", ".join(available_stacks(path.parent)) or "none"
        raise UserError(
            f"stack '{stack}': no file {path.name} in {path.parent} (stacks there: {names}); "
            "copy an example with `clusterctl init --example NAME DIR`"
        )
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise UserError(
            f"{path.name}: not valid YAML{where}: {getattr(exc, 'problem', exc)}"
        ) from None
    config = doc.get("config") if isinstance(doc, dict) else None
    if not isinstance(config, dict):
        raise UserError(f"{path.name}: needs a top-level 'config:' mapping with {CONFIG_KEY}")
    problems = []
    for key in config:
        namespace = key.split(":", 1)[0]
        if namespace == CONFIG_NAMESPACE and key != CONFIG_KEY:
            problems.append(
                f"{path.name}: unknown config key '{key}'; did you mean '{CONFIG_KEY}'?"
            )
        elif namespace not in (CONFIG_NAMESPACE, *PROVIDER_NAMESPACES):
            problems.append(
                f"{path.name}: unknown config key '{key}'; this project reads {CONFIG_KEY}"
            )
    if CONFIG_KEY not in config:
        problems.append(f"{path.name}: config has no '{CONFIG_KEY}' object")
    if problems:
        raise UserError(problems)
    return config


def parse_path(path: str) -> list[str | int]:
    """'partitions[0].nodes' -> ['partitions', 0, 'nodes']."""
    parts: list[str | int] = []
    pos = 0
    text = path.strip()
    while pos < len(text):
        if text[pos] == "." and parts:
            pos += 1
        match = _TOKEN.match(text, pos)
        if not match:
            raise UserError(f"--set {path}: cannot read the path at '{text[pos:]}'")
        parts.append(match.group(1) if match.group(1) else int(match.group(2)))
        pos = match.end()
    if not parts or not isinstance(parts[0], str):
        raise UserError(f"--set {path}: a path starts with a key, e.g. partitions[0].nodes")
    return parts


def apply_overrides(cluster: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Return a copy of `cluster` with each `path=value` applied; values are read as YAML."""
    out = copy.deepcopy(cluster)
    for item in overrides:
        if "=" not in item:
            raise UserError(f"--set {item}: expected path=value, e.g. partitions[0].nodes=64")
        path, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        _assign(out, parse_path(path), value, path)
    return out


def _assign(node: Any, parts: list[str | int], value: Any, text: str) -> None:
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, list) or not -len(node) <= part < len(node):
                size = len(node) if isinstance(node, list) else 0
                raise UserError(f"--set {text}: index [{part}] is out of range (has {size})")
            if last:
                node[part] = value
            else:
                node = node[part]
        else:
            if not isinstance(node, dict):
                raise UserError(f"--set {text}: '{part}' is not inside a mapping")
            if last:
                node[part] = value
            else:
                nxt = parts[i + 1]
                node = node.setdefault(part, [] if isinstance(nxt, int) else {})
