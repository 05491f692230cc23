"""The clouds: one module per cloud in this package (azure.py, aws.py), each setting `CLOUD` to
its `Cloud` object (base.py), which answers every question that differs between clouds.

A new cloud is a new module here, its components and its catalog rows; no list to edit. The
registry imports every module of this package at its own import, so a cloud is found by its
file: simpler than entry points, which need the package installed again before a new one shows
(and the product's clouds ship inside it anyway). `register` adds a cloud from elsewhere (a
test's stub); it must run before clusterctl.spec is imported, since the stack model's `cloud`
field lists the names once (`names`).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Literal

from clusterctl.clouds.base import ANY, Cloud, Feature

__all__ = ["ANY", "Cloud", "Feature", "all_clouds", "cloud_of", "name_type", "names", "register"]

_CLOUDS: dict[str, Cloud] = {}
_listed: list[tuple[str, ...]] = []
"""The names as `names` first gave them (the stack model's Literal); registering later fails."""


def register(cloud: Cloud) -> None:
    if not isinstance(cloud, Cloud):
        raise TypeError(f"{cloud!r} is not a clusterctl.clouds.Cloud")
    if cloud.name in _CLOUDS:
        raise ValueError(f"cloud {cloud.name!r} is registered twice")
    if _listed:
        raise RuntimeError(
            f"cloud {cloud.name!r}: register clouds before clusterctl.spec is imported (the stack "
            f"model already lists {', '.join(_listed[0])})"
        )
    _CLOUDS[cloud.name] = cloud


def _discover() -> None:
    for module in pkgutil.iter_modules(__path__):
        if module.name == "base":
            continue
        cloud = getattr(importlib.import_module(f"{__name__}.{module.name}"), "CLOUD", None)
        if cloud is None:
            raise TypeError(f"{__name__}.{module.name} sets no CLOUD")
        register(cloud)


_discover()


def all_clouds() -> list[Cloud]:
    """Every cloud, in the order users see them listed."""
    return sorted(_CLOUDS.values(), key=lambda c: (c.listed, c.name))


def names() -> tuple[str, ...]:
    """The `cloud:` values a stack may give, in the order users see them; fixed once read."""
    listed = tuple(c.name for c in all_clouds())
    if not _listed:
        _listed.append(listed)
    return listed


def name_type() -> Any:
    """`Literal[<every cloud's name>]` for a pydantic field: its error message and JSON schema
    list the clouds in `names` order."""
    return Literal[names()]  # type: ignore[valid-type]


def cloud_of(name: str) -> Cloud:
    return _CLOUDS[name]
