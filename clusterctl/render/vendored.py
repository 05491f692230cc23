"""Files the program applies from config/ instead of fetching them at deploy time, each checked
against the sha256 config/versions.yaml pins for it: a swapped or damaged copy stops the render.

Today: kubeflow/mpi-operator's release manifest (manifests.mpiOperator), which the cluster used
to fetch from GitHub at `pulumi up`, unchecked.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from clusterctl.errors import UserError
from clusterctl.project import config_dir, data_root
from clusterctl.spec.catalog import Catalog

MPI_OPERATOR_KEY = "config/versions.yaml manifests.mpiOperator"


class VendoredFileError(UserError):
    pass


def checked_file(rel: str, sha256: str, key: str) -> Path:
    """config/<rel>, or the shipped copy where a catalog of your own has none, if its sha256 is
    the pinned one."""
    path = config_dir() / rel
    if not path.is_file():
        path = data_root() / "config" / rel
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise VendoredFileError(f"{key}: cannot read {path} ({exc.strerror})") from None
    got = hashlib.sha256(data).hexdigest()
    if got != sha256.lower():
        raise VendoredFileError(
            f"{key}: {path} has sha256 {got}, but the pin is {sha256}; restore the file, or put "
            "the new file's sha256 in the pin after reviewing it"
        )
    return path


def mpi_operator_manifest(cat: Catalog) -> Path:
    """The checked path of the MPI operator's release manifest."""
    pin = (cat.versions.get("manifests") or {}).get("mpiOperator") or {}
    if not isinstance(pin, dict) or not pin.get("file") or not pin.get("sha256"):
        raise VendoredFileError(
            f"{MPI_OPERATOR_KEY}: set `file` (a copy of the release's mpi-operator.yaml under "
            "config/) and its `sha256`; the manifest is not fetched unchecked"
        )
    return checked_file(str(pin["file"]), str(pin["sha256"]), MPI_OPERATOR_KEY)
