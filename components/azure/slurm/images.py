"""Image references from the catalog (config/images.yaml) or a stack's override: a marketplace URN
or an Azure Compute Gallery image version id (clusterctl.spec.images)."""

from __future__ import annotations

from clusterctl.spec.catalog import catalog
from clusterctl.spec.images import parse_azure_image


def image_reference(
    kind: str, override: str | None = None, entry: dict | None = None
) -> dict[str, str]:
    """`kind` is a key of config/images.yaml's azure section; `override` a URN pub:offer:sku:ver
    or a gallery image id; `entry` an image the catalog already chose (a GPU size's family)."""
    if override:
        image = parse_azure_image(override)
        if image is None:  # the spec rules refuse it first; never guess a reference
            raise ValueError(f"not an Azure image URN or gallery image id: {override}")
        return image.reference()
    if entry is None:
        section = catalog().images["azure"][kind]
        entry = section.get("default", section)
    return {k: str(entry[k]) for k in ("publisher", "offer", "sku", "version")}
