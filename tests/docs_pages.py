"""The user documentation that tests hold to the code: README.md and every page of the docs site
(docs/**/*.md, built by mkdocs.yml). A command, benchmark or claim a test checks may live on any of
them, so the tests read them all, or name the one page a section lives on."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """README.md, then every Markdown page under docs/, in a stable order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def text() -> str:
    """Every page's text, one after another (a blank line between pages)."""
    return "\n\n".join(path.read_text() for path in pages())
