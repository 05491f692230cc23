"""What cloud-init installs on the nodes, from config/versions.yaml `nodePackages` (one place)."""

from __future__ import annotations

from clusterctl.spec.catalog import Catalog, Sku


def node_versions(cat: Catalog) -> dict[str, str]:
    """What cloud-init installs, pinned in config/versions.yaml `nodePackages` (one place)."""
    pkgs = cat.versions.get("nodePackages", {})
    try:
        return {
            "slurm": str(pkgs["slurm"]["version"]),
            "slurm_repo": str(pkgs["slurm"]["aptRepo"]["jammy"]),
            "pmix": str(pkgs["pmix"]["version"]),
            "enroot": str(pkgs["enroot"]["version"]),
            "pyxis": str(pkgs["pyxis"]["gitTag"]),
            "aznhc": str(pkgs["nhc"]["azurehpcHealthChecks"]["version"]),
            "nhc_tag": str(pkgs["nhc"]["lbnl"]["gitTag"]),
            "nhc_commit": str(pkgs["nhc"]["lbnl"]["gitCommit"]),
            "nhc_repo": str(pkgs["nhc"]["lbnl"]["repo"]),
            "amlfs_lustre": str(pkgs["amlfsLustreClient"]["version"]),
        }
    except (KeyError, TypeError) as exc:
        raise LookupError(f"config/versions.yaml nodePackages: missing {exc}") from None


def slurm_repo(cat: Catalog, sku: Sku) -> str:
    """The Slurm apt repository for the Ubuntu release of the SKU's image family."""
    codename = cat.gpu_image(sku).get("codename")
    repos = cat.versions.get("nodePackages", {}).get("slurm", {}).get("aptRepo", {})
    if codename not in repos:
        raise LookupError(f"config/versions.yaml nodePackages.slurm.aptRepo: no {codename!r} repo")
    return str(repos[codename])
