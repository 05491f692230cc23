"""A package docstring that lists its modules lists exactly the modules there are: a module added,
renamed or removed without the map changing fails here (the map is how a reader finds a concern).
Every package has a docstring that says what it is."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PACKAGES = sorted(
    p.parent
    for top in ("clusterctl", "components")
    for p in (ROOT / top).rglob("__init__.py")
    if "files" not in p.relative_to(ROOT).parts
)
# A module map line: "name  what it does", "a / b   ...", "a, b, c: ..." or "name: ...".
ENTRY = re.compile(r"^\s*([a-z_][a-z0-9_]*(?:\s*[,/]\s*[a-z_][a-z0-9_]*)*)(?:\s{2,}|:\s)")


def _doc(pkg: Path) -> str:
    return ast.get_docstring(ast.parse((pkg / "__init__.py").read_text())) or ""


def _modules(pkg: Path) -> set[str]:
    mods = {p.stem for p in pkg.glob("*.py")} - {"__init__", "__main__"}
    return mods | {p.name for p in pkg.iterdir() if (p / "__init__.py").is_file()}


def _listed(doc: str, modules: set[str]) -> set[str]:
    names: set[str] = set()
    for line in doc.splitlines():
        m = ENTRY.match(line)
        if m:
            names |= {n.strip() for n in re.split(r"[,/]", m.group(1))}
    return names


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_package_says_what_it_is(pkg: Path) -> None:
    assert _doc(pkg).strip(), f"{pkg.relative_to(ROOT)}/__init__.py has no docstring"


MAPPED = [p for p in PACKAGES if len(_listed(_doc(p), _modules(p)) & _modules(p)) >= 3]
"""The packages whose docstring carries a module map (three or more of its modules named)."""


def test_the_big_packages_carry_a_module_map() -> None:
    names = {str(p.relative_to(ROOT)) for p in MAPPED}
    big = {str(p.relative_to(ROOT)) for p in PACKAGES if len(_modules(p)) >= 6}
    assert big <= names, f"no module map in: {sorted(big - names)}"


@pytest.mark.parametrize("pkg", MAPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_map_names_every_module_and_no_other(pkg: Path) -> None:
    modules = _modules(pkg)
    listed = _listed(_doc(pkg), modules)
    assert listed & modules == modules, f"not in the map: {sorted(modules - listed)}"
    assert listed <= modules, f"no such module: {sorted(listed - modules)}"
