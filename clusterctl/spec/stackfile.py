"""Read `stacks/Pulumi.<stack>.yaml` and apply `--set path=value` overrides, as pure functions."""

from __future__ import annotations

import copy
import difflib
import re
from pathlib import Path
from typing import Any

import yaml

from clusterctl.clouds import all_clouds
from clusterctl.errors import UserError
from clusterctl.project import find_project, stack_names
from clusterctl.spec.model import CONFIG_KEY, CONFIG_NAMESPACE


class _UniqueKeyLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no stubs
    """A SafeLoader that refuses a key twice in one mapping (plain YAML keeps the last silently)."""


def _mapping_without_duplicates(
    loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False
) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise DuplicateKey(str(key), seen[key] + 1, key_node.start_mark.line + 1)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates
)


class DuplicateKey(Exception):
    def __init__(self, key: str, first: int, again: int):
        self.key, self.first, self.again = key, first, again
        super().__init__(f"key '{key}' at line {again} was already set at line {first}")


def load_yaml(text: str) -> Any:
    """yaml.safe_load, but a key given twice in one mapping is an error, not a silent override."""
    return yaml.load(text, Loader=_UniqueKeyLoader)


PROVIDER_NAMESPACES = (
    *(n for cloud in all_clouds() for n in cloud.provider_namespaces),
    *("kubernetes", "pulumi", "random", "tls"),
)
_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")


_STACK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def stack_path(stack: str, root: Path | None = None) -> Path:
    if not _STACK_NAME.match(stack):
        raise UserError(
            f"stack '{stack}': a stack name has letters, digits, '-', '_' and '.' only "
            "(it names stacks/Pulumi.<stack>.yaml)"
        )
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
        doc = load_yaml(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "save it as UTF-8"
        ) from None
    except DuplicateKey as exc:
        raise UserError(
            f"{path.name}: key '{exc.key}' appears twice in one mapping (lines {exc.first} and "
            f"{exc.again}); YAML would silently keep the last: delete one"
        ) from None
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
                continue
            nxt = parts[i + 1]
            if part not in node and isinstance(nxt, int):
                # An index into a list the file does not have: most likely a misspelled key.
                close = difflib.get_close_matches(part, [str(k) for k in node], 1)
                hint = f"did you mean '{close[0]}'?" if close else "the file has no such list"
                raise UserError(f"--set {text}: no key '{part}' here; {hint}")
            node = node.setdefault(part, [] if isinstance(nxt, int) else {})
