"""Ask the cloud which resources still carry the stack's tag, behind one small interface (each
cloud's finder: clusterctl/clouds/).

`down` compares the answer with what the stack keeps on purpose (protected storage and what it
needs); anything else tagged with the stack is a survivor that may still bill.
"""

from __future__ import annotations

from collections.abc import Iterable

from clusterctl.clouds import cloud_of
from clusterctl.clouds.base import CheckUnavailable, CloudResource, SurvivorFinder
from clusterctl.spec.model import ClusterSpec

__all__ = ["CheckUnavailable", "CloudResource", "SurvivorFinder", "finder_for", "survivors"]


def finder_for(spec: ClusterSpec) -> SurvivorFinder:
    """Each cloud's own (clusterctl/clouds/<cloud>.py survivor_finder)."""
    return cloud_of(spec.cloud).survivor_finder(spec.region)


def survivors(found: Iterable[CloudResource], kept_ids: Iterable[str]) -> list[CloudResource]:
    """Tagged resources the stack does not keep on purpose. Azure ids differ in case between
    APIs, so ids compare case-insensitively."""
    kept = {i.lower() for i in kept_ids}
    seen: set[str] = set()
    out = []
    for res in found:
        key = res.id.lower()
        if key not in kept and key not in seen:
            seen.add(key)
            out.append(res)
    return out
