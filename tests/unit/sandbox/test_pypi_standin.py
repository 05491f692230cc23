"""The sandbox's PyPI stand-in serves every pin a node installs from PyPI: the power program's,
submitit for the team's venv, and the JupyterLab a notebook installs on first use."""

from __future__ import annotations

from clusterctl.sandbox.vm import pypi
from clusterctl.spec.catalog import catalog


def test_the_stand_in_serves_the_notebooks_pinned_jupyterlab() -> None:
    version = catalog().versions["notebook"]["pypi"]["jupyterlab"]
    pins = pypi.pins_from_catalog()
    assert f"jupyterlab=={version}" in pins
    assert any(p.startswith("submitit==") for p in pins)
    assert any(p.startswith("azure-identity==") for p in pins)
