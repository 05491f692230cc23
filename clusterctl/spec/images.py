"""What each role of an Azure Slurm stack boots: a marketplace URN or an Azure Compute Gallery
image version, where it comes from (the stack or config/images.yaml) and whether it is pinned.

`rules_input` warns on what is not pinned, `rules` refuses a GPU image without the NVIDIA stack,
the components build the VM's imageReference from it, `clusterctl images` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.clouds.azure import AZURE_IMAGE_URN, GALLERY_IMAGE_ID
from clusterctl.platform import cloud_of, scheduler_of
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.defaults import login_count
from clusterctl.spec.model import ClusterSpec, field_path

PLACEHOLDER_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class AzureImage:
    text: str
    urn: tuple[str, str, str, str] | None = None
    """publisher, offer, sku, version of a marketplace image."""
    gallery_version: str | None = None

    @property
    def pinned(self) -> bool:
        if self.urn is not None:
            return self.urn[3].lower() != "latest"
        return self.gallery_version is not None

    @property
    def placeholder(self) -> bool:
        m = GALLERY_IMAGE_ID.match(self.text)
        return bool(m and m.group("subscription") == PLACEHOLDER_SUBSCRIPTION)

    def reference(self) -> dict[str, str]:
        """The VM's storageProfile.imageReference."""
        if self.urn is None:
            return {"id": self.text}
        return dict(zip(("publisher", "offer", "sku", "version"), self.urn, strict=True))


def parse_azure_image(text: str) -> AzureImage | None:
    """A URN publisher:offer:sku:version or a gallery image (version) id; None if neither."""
    if AZURE_IMAGE_URN.match(text):
        publisher, offer, sku, version = text.split(":")
        return AzureImage(text, urn=(publisher, offer, sku, version))
    m = GALLERY_IMAGE_ID.match(text)
    if m:
        return AzureImage(text, gallery_version=m.group("version"))
    return None


@dataclass(frozen=True)
class RoleImage:
    role: str
    field: str
    """The stack field that sets it, as plan names fields."""
    image: str
    origin: str
    """`stack` (the stack names it) or the config/images.yaml key it defaults to."""
    source: str
    """Where the catalog's pin comes from (versionSource), or that the stack chose it."""
    hpc_image: bool
    """The image carries the NVIDIA driver stack (the Azure HPC image, or the stack's own)."""


def role_images(spec: ClusterSpec, cat: Catalog) -> list[RoleImage]:
    """Every VM role of an Azure Slurm stack with the image it boots; [] for other stacks."""
    cloud = cloud_of(spec.cloud)
    if not (scheduler_of(spec.scheduler).head_node and cloud.gpu_scale_sets):
        return []
    azure = cat.images.get(cloud.name, {})
    head = azure.get("scheduler", {})
    roles = ["scheduler"]
    if spec.ssh.access == "jumphost":
        roles.append("jump host")
    if login_count(spec):
        roles.append("login nodes")
    out = [
        RoleImage(
            role=", ".join(roles),
            field=field_path("headNode", "image"),
            image=spec.head_node.image or str(head.get("urn")),
            origin="stack" if spec.head_node.image else "config/images.yaml azure.scheduler",
            source="the stack" if spec.head_node.image else str(head.get("versionSource", "")),
            hpc_image=False,
        )
    ]
    families = azure.get("gpuNodes", {}).get("families", {})
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, spec.cloud)
        if sku is None or sku.node is None:
            continue
        entry = cat.gpu_image(sku)
        family = sku.node.image_family
        key = (
            f"config/images.yaml azure.gpuNodes.families.{family}"
            if family in families
            else "config/images.yaml azure.gpuNodes.default"
        )
        plain = entry.get("hpcImage") is False
        if part.image:
            parsed = parse_azure_image(part.image)
            same_as_plain = (
                plain
                and parsed is not None
                and parsed.urn is not None
                and parsed.urn[:3] == (entry["publisher"], entry["offer"], entry["sku"])
            )
            out.append(
                RoleImage(
                    role=f"partition {part.name} ({sku.name})",
                    field=field_path("partitions", i, "image"),
                    image=part.image,
                    origin="stack",
                    source="the stack",
                    hpc_image=not same_as_plain,
                )
            )
        else:
            out.append(
                RoleImage(
                    role=f"partition {part.name} ({sku.name})",
                    field=field_path("partitions", i, "image"),
                    image=str(entry.get("urn")),
                    origin=key,
                    source=str(entry.get("versionSource", entry.get("source", ""))),
                    hpc_image=not plain,
                )
            )
    return out


def how_to_move(spec: ClusterSpec, item: RoleImage) -> str:
    """The commands that list the versions this role could boot, and where the pin lives."""
    parsed = parse_azure_image(item.image)
    short = item.field.removeprefix("gpu-clusters:cluster.")
    if parsed is not None and parsed.urn is not None:
        publisher, offer, sku, _ = parsed.urn
        listing = (
            f"az vm image list -l {spec.region} -p {publisher} -f {offer} -s {sku} --all -o table"
        )
        target = f"{publisher}:{offer}:{sku}:<version>"
    else:
        listing = (
            "az sig image-version list -g <gallery resource group> -r <gallery> -i <image> -o table"
        )
        target = "the image version's resource id"
    where = (
        f"set {short} in the stack to {target}"
        if item.origin == "stack"
        else f"set {short} in the stack to {target} (this stack only), or edit `version` and "
        f"`urn` under {item.origin} (every stack)"
    )
    return f"{listing}; then {where}"
