"""The documentation: a README of one to three screens that sends readers to the docs site, and
the site (mkdocs.yml, docs/) builds with `--strict` (every link, anchor and page accounted for),
as .ci/run builds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests import docs_pages
from tests.conftest import ROOT


def nav_pages(nav: list) -> list[str]:
    out = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        out += nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_the_readme_is_short_and_links_every_topic_page() -> None:
    readme = docs_pages.README.read_text()
    assert len(readme.splitlines()) < 250
    topics = [p for p in sorted(docs_pages.DOCS.glob("*.md")) if p.name != "index.md"]
    assert topics
    missing = [p.name for p in topics if f"](docs/{p.name})" not in readme]
    assert not missing, f"README does not send readers to {missing}"


def test_every_docs_page_is_in_the_nav() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.SafeLoader)
    listed = set(nav_pages(config["nav"]))
    pages = {str(p.relative_to(docs_pages.DOCS)) for p in docs_pages.pages()[1:]}
    assert pages == listed, (sorted(pages - listed), sorted(listed - pages))


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    got = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert got.returncode == 0, got.stderr[-3000:]
    assert (tmp_path / "reference" / "configuration" / "index.html").is_file()


def test_ci_builds_the_site_strictly_after_the_linters() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    build = ci.index(".venv/bin/mkdocs build --strict")
    assert ci.index(".venv/bin/mypy") < build < ci.index("suite fast")
