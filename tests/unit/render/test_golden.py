"""Rendered files are checked in as golden copies: any template change shows up as a text diff.

After an intended change: `UPDATE_GOLDEN=1 python -m pytest tests/unit/render/test_golden.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clusterctl.render.bundle import render_bundle
from clusterctl.spec.load import load_stack_spec

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


@pytest.mark.parametrize("stack", ["azure-h100", "azure-a100", "aws-p5", "aks-h100"])
def test_rendered_files_match_golden_copies(stack: str) -> None:
    spec, _ = load_stack_spec(stack)
    files = render_bundle(spec, stack)
    folder = GOLDEN / stack
    if os.environ.get("UPDATE_GOLDEN"):
        for rel, text in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
    golden = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert golden == set(files), "files added or removed: rerun with UPDATE_GOLDEN=1 and review"
    for rel, text in files.items():
        assert (folder / rel).read_text() == text, f"{stack}/{rel} differs from its golden copy"
