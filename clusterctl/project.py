"""Where the project's data lives: the checkout's top level, or inside an installed wheel."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent
DEFAULT_WORKDIR = Path("/var/tmp/clusterctl-sandbox")
"""Where `clusterctl sandbox` keeps a running sandbox unless told otherwise."""


@cache
def data_root() -> Path:
    """The folder holding templates/, config/ and stacks/.

    In a checkout (or an editable install) that is the repository root; a wheel carries copies
    under clusterctl/_data (see pyproject's force-include).
    """
    installed = _PKG / "_data"
    if (installed / "templates").is_dir():
        return installed
    return _PKG.parent


def templates_dir() -> Path:
    return data_root() / "templates"


def config_dir() -> Path:
    """The catalog folder; GPU_CLUSTERS_CONFIG_DIR points at a catalog of your own."""
    override = os.environ.get("GPU_CLUSTERS_CONFIG_DIR")
    return Path(override) if override else data_root() / "config"


def stacks_dir() -> Path:
    return data_root() / "stacks"
