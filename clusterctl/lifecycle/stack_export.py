"""Pure functions over a stack's exported state (`pulumi stack export`, deployment v3)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

ROLE_TAG = "gpu-clusters:role"
STORAGE_ROLE = "storage"
UNTAGGED_STORAGE_TYPES = {"azure-native:storage:FileShare"}
"""User data that cannot carry tags (an Azure file share has metadata only; its account has)."""
_BOOKKEEPING = ("pulumi:pulumi:Stack", "pulumi:providers:")
_RFC3339 = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$")


@dataclass(frozen=True)
class StateResource:
    urn: str
    type: str
    id: str | None
    custom: bool
    protect: bool
    parent: str | None
    dependencies: tuple[str, ...]
    provider: str | None
    created: datetime | None
    tags: dict[str, str]

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]

    @property
    def is_cloud_resource(self) -> bool:
        """A custom resource the cloud bills or holds; not the stack, a provider or a component."""
        return self.custom and not self.type.startswith(_BOOKKEEPING)

    @property
    def is_storage(self) -> bool:
        return self.tags.get(ROLE_TAG) == STORAGE_ROLE or self.type in UNTAGGED_STORAGE_TYPES

    def as_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "id": self.id,
            "protected": self.protect,
            "storage": self.is_storage,
        }


def parse_time(text: str | None) -> datetime | None:
    """RFC 3339 as Pulumi writes it (`2025-05-01T10:00:00.123456789Z`), to an aware datetime
    (naive input is UTC)."""
    if not text:
        return None
    match = _RFC3339.match(text.strip())
    if not match:
        return None
    date, fraction, zone = match.groups()
    # Go writes up to nanoseconds; Python reads up to microseconds.
    value = date + (f".{fraction[:6]}" if fraction else "") + (zone or "+00:00")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def resources_of(deployment: dict[str, Any] | None) -> list[StateResource]:
    """The resources of `Stack.export_stack().deployment` (None or empty: no resources)."""
    rows = (deployment or {}).get("resources") or []
    return [_resource(row) for row in rows]


def _resource(row: dict[str, Any]) -> StateResource:
    provider = row.get("provider") or None
    return StateResource(
        urn=row["urn"],
        type=row.get("type", ""),
        id=row.get("id") or None,
        custom=bool(row.get("custom")),
        protect=bool(row.get("protect")),
        parent=row.get("parent") or None,
        dependencies=tuple(row.get("dependencies") or ()),
        # A provider reference is "<provider urn>::<provider id>".
        provider=provider.rsplit("::", 1)[0] if provider else None,
        created=parse_time(row.get("created")),
        tags=_tags(row),
    )


def _tags(row: dict[str, Any]) -> dict[str, str]:
    """Tags as the cloud sees them: Azure `tags`, AWS `tagsAll`/`tags`, Kubernetes labels."""
    tags: dict[str, str] = {}
    for bag in (row.get("inputs") or {}, row.get("outputs") or {}):
        for key in ("tags", "tagsAll"):
            if isinstance(bag.get(key), dict):
                tags.update({k: str(v) for k, v in bag[key].items()})
        labels = (bag.get("metadata") or {}).get("labels") if isinstance(bag, dict) else None
        if isinstance(labels, dict):
            tags.update({k: str(v) for k, v in labels.items()})
    return tags


def cloud_resources(resources: list[StateResource]) -> list[StateResource]:
    return [r for r in resources if r.is_cloud_resource]


def kept_by_protection(resources: list[StateResource]) -> list[StateResource]:
    """What `pulumi destroy --exclude-protected` leaves: protected resources and everything they
    need (dependencies, parents, providers), transitively."""
    by_urn = {r.urn: r for r in resources}
    keep: set[str] = set()
    todo = [r.urn for r in resources if r.protect]
    while todo:
        urn = todo.pop()
        if urn in keep or urn not in by_urn:
            continue
        keep.add(urn)
        res = by_urn[urn]
        todo.extend(res.dependencies)
        todo.extend(u for u in (res.parent, res.provider) if u)
    return [r for r in resources if r.urn in keep]


def storage_to_unprotect(resources: list[StateResource]) -> list[StateResource]:
    """Protected resources that hold user data (tagged gpu-clusters:role=storage)."""
    return [r for r in resources if r.protect and r.is_storage]


def compute_since(resources: list[StateResource]) -> datetime | None:
    """When the oldest cloud resource of the stack was created (None: state has no times)."""
    times = [r.created for r in cloud_resources(resources) if r.created]
    return min(times) if times else None
