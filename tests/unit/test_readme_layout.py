"""The layout map (docs/development.md, "Layout") matches the tree: every path it names exists,
every part of the tree is under one of its rows, and a row that lists its package's modules lists
all of them."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = ROOT / "docs" / "development.md"


def layout_rows() -> dict[str, str]:
    text = LAYOUT.read_text()
    table = text.split("| path | holds |", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, str] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for path in re.findall(r"`([^`]+)`", cells[0]):
            rows[path.rstrip("/")] = cells[1]
    assert len(rows) > 10, rows
    return rows


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_every_path_in_the_map_exists() -> None:
    missing = [p for p in layout_rows() if not (ROOT / p).exists()]
    assert not missing, f"docs/development.md's layout names paths that do not exist: {missing}"


def test_every_tracked_source_is_under_a_row_of_the_map() -> None:
    rows = layout_rows()
    unmapped = set()
    for path in tracked():
        if path.startswith(".") or path in ("README.md", "pyproject.toml", ".gitignore"):
            continue
        if not any(path == r or path.startswith(r + "/") for r in rows):
            top = path.split("/")[0] if not path.startswith("clusterctl/") else path
            unmapped.add(top if "/" not in top else "/".join(path.split("/")[:2]))
    assert not unmapped, f"docs/development.md's layout has no row for: {sorted(unmapped)}"


LISTED = ("clusterctl/spec", "clusterctl/render", "clusterctl/plan")
"""The rows that name their package's modules one by one."""


def test_a_row_that_lists_modules_lists_every_module_of_its_package() -> None:
    rows = layout_rows()
    for path in LISTED:
        modules = {p.stem for p in (ROOT / path).glob("*.py") if p.stem != "__init__"}
        named = set(re.findall(r"`([a-z_0-9]+)`", rows[path]))
        assert modules, path
        assert modules <= named, f"{path}: the layout row misses {sorted(modules - named)}"
