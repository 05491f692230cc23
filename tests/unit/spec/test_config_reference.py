"""The configuration reference (docs/reference/configuration.md) is what the spec model generates:
the page in the checkout is never edited by hand and never stale."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from tests.conftest import ROOT

TOOL = ROOT / "tools" / "config_reference.py"


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_reference", TOOL)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_checked_in_reference_is_what_the_model_generates() -> None:
    got = subprocess.run(
        [sys.executable, str(TOOL), "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert got.returncode == 0, got.stderr  # names the command that regenerates the page


def test_a_stale_page_fails_the_check_naming_the_command(tmp_path: Path, monkeypatch, capsys):
    reference = tool()
    page = tmp_path / "configuration.md"
    monkeypatch.setattr(reference, "PAGE", page)
    monkeypatch.setattr(reference, "ROOT", tmp_path)
    fresh = reference.render()
    page.write_text(fresh.replace('`"azureuser"`', '`"someoneelse"`'))
    assert page.read_text() != fresh
    assert reference.main(["--check"]) == 1
    assert capsys.readouterr().err.strip() == (
        "configuration.md is stale: run `.venv/bin/python tools/config_reference.py`"
    )
    assert reference.main([]) == 0  # regenerates it
    assert reference.main(["--check"]) == 0


def test_a_field_docstring_reaches_its_row(monkeypatch) -> None:
    """The meaning column is the field's docstring in the model, nothing written elsewhere."""
    from clusterctl.spec.model import StorageSpec

    reference = tool()
    defs = StorageSpec.model_json_schema(by_alias=True).get("$defs", {})
    rows = {r[0]: r for r in reference.rows(StorageSpec, "storage.", defs)}
    doc = reference.docstrings(StorageSpec)["keep_on_destroy"]
    assert rows["storage.keepOnDestroy"] == (
        "storage.keepOnDestroy", "boolean", "`true`", doc
    )  # fmt: skip
    assert rows["storage.sizeGib"][1] == "integer (>= 32, <= 65536)"
    assert rows["storage.kind"][1] == 'one of `"scheduler-nfs"`, `"azure-files-nfs"`, `"none"`'
