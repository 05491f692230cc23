"""Image references from the catalog (config/images.yaml) or a partition's override URN."""

from __future__ import annotations

from clusterctl.spec.catalog import catalog


def image_reference(
    kind: str, override: str | None = None, entry: dict | None = None
) -> dict[str, str]:
    """`kind` is a key of config/images.yaml's azure section; `override` a URN pub:offer:sku:ver;
    `entry` an image the catalog already chose (a GPU size's image family)."""
    if override:
        publisher, offer, sku, version = override.split(":")
        return {"publisher": publisher, "offer": offer, "sku": sku, "version": version}
    if entry is None:
        section = catalog().images["azure"][kind]
        entry = section.get("default", section)
    return {k: str(entry[k]) for k in ("publisher", "offer", "sku", "version")}
