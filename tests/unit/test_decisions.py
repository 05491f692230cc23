"""Reasons live in docs/decisions/: the code points there, never at an issue tracker or a notes
file a reader does not have, and every record it points at exists and is indexed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
DECISIONS = ROOT / "docs" / "decisions"
SOURCES = [
    p
    for top in ("clusterctl", "components", "templates", "stacks")
    for p in sorted((ROOT / top).rglob("*"))
    if p.suffix in (".py", ".j2", ".yaml") and "__pycache__" not in p.parts
]


def test_code_points_at_no_issue_and_no_facts_file() -> None:
    """Old code: 10 comments cited "issue N" or FACTS.md, which the repository does not hold."""
    bad = re.compile(r"\bissue \d+\b(?! in)|\(issue \d+|FACTS(\.md| \d)")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in SOURCES
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if bad.search(line) and "nccl-tests issue" not in line and "issues " not in line
    ]
    assert not found, found


def test_every_decision_the_code_cites_exists_and_is_indexed() -> None:
    records = {p.name[:4]: p for p in DECISIONS.glob("[0-9][0-9][0-9][0-9]-*.md")}
    assert len(records) >= 6
    index = (DECISIONS / "README.md").read_text()
    for path in records.values():
        assert f"]({path.name})" in index, f"{path.name} is not in docs/decisions/README.md"
    cited = {
        m.group(1)
        for p in SOURCES
        for m in re.finditer(r"docs/decisions/(\d{4})", p.read_text(errors="replace"))
    }
    assert cited, "no code cites a decision"
    assert cited <= set(records), f"cited but missing: {sorted(cited - set(records))}"
