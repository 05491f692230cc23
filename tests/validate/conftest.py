"""Fixtures for `clusterctl validate` tests: the command on a typer app of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from clusterctl.cli.validate import register

DATA = Path(__file__).resolve().parents[1] / "data" / "nccl"
HERE = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.command()
    def _unused() -> None:  # a second command keeps typer from collapsing to a single one
        pass

    return app


@pytest.fixture
def cli(app):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, ["validate", *args])

    return invoke
