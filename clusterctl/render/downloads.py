"""What a node downloads from outside the cluster, with the pin that each download is checked
against before use (config/versions.yaml): enroot's release .debs by sha256 (gpucl-fetch.sh),
pyxis and LBNL NHC by git commit, the DCGM exporter image by manifest digest."""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.spec.catalog import Catalog, Sku

DEB_ARCH = {"x86_64": "amd64", "arm64": "arm64"}
"""Debian's name for a catalog cpuArch (node.cpuArch in config/skus.yaml)."""


@dataclass(frozen=True)
class Download:
    name: str
    """The file's name, the key of its pin in config/versions.yaml."""
    url: str
    sha256: str | None
    """None: no pin recorded; the node installs it unchecked and says so."""
    dest: str


def enroot_debs(cat: Catalog, sku: Sku) -> list[Download]:
    """enroot and enroot+caps for the SKU's CPU architecture, installed together by apt."""
    enroot = cat.versions["nodePackages"]["enroot"]
    arch = DEB_ARCH[sku.shape.cpu_arch]
    pins = enroot.get("sha256") or {}
    out = []
    for key, dest in (("debUrl", "/tmp/enroot.deb"), ("capsDebUrl", "/tmp/enroot-caps.deb")):
        url = str(enroot[key]).format(arch=arch)
        name = url.rsplit("/", 1)[1]
        if name not in pins:  # every file a node can fetch has its line, recorded or null
            raise LookupError(f"config/versions.yaml nodePackages.enroot.sha256: no line {name}")
        pin = pins[name]
        out.append(Download(name, url, str(pin).lower() if pin else None, dest))
    return out


def pyxis_commit(cat: Catalog) -> str:
    return str(cat.versions["nodePackages"]["pyxis"]["gitCommit"])


def dcgm_reference(cat: Catalog) -> str:
    """The DCGM exporter image as docker pulls it: by digest where one is pinned."""
    entry = cat.versions["monitoring"]["dcgmExporter"]
    digest = entry.get("digest")
    return f"{entry['image']}@{digest}" if digest else str(entry["image"])


def unpinned(cat: Catalog) -> list[str]:
    """Every download a node makes whose pin is not recorded (config/versions.yaml null)."""
    names = []
    enroot = cat.versions["nodePackages"]["enroot"]
    names += [f"enroot {name}" for name, pin in (enroot.get("sha256") or {}).items() if not pin]
    if not cat.versions["monitoring"]["dcgmExporter"].get("digest"):
        names.append("dcgm-exporter image digest")
    return sorted(names)
