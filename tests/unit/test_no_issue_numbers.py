"""Tests and code say the behaviour, never an issue number: a reader has no way to reach the tracker
such a number points at. Comments, docstrings, test names and file names under the scanned folders
cite no "issue 27", "issues 27 and 28", "Issue 30 item 8" or "(#23)". An upstream project's issue
stays citable as `owner/repo issue N` (or `owner/repo#N`): anyone can open that one."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("clusterctl", "components", "tests", "templates", "config", "benchmarks", "tools")
NOT_YET: tuple[str, ...] = ()
"""Folders being rewritten elsewhere at the time of writing; empty this once they are clean."""
SKIPPED = ("tests/golden", "tests/data/charts")
"""Rendered copies of templates/ (checked there) and vendored upstream charts."""
SUFFIXES = (".py", ".md", ".sh", ".j2", ".yaml", ".yml", ".toml", ".cfg", ".service", ".timer")

WORD = re.compile(r"\bissues?(?:\s+#?|#)\d+", re.IGNORECASE)
"""`issue 27`, `Issues 27 and 28`, `issue #15`, also split over two lines; not `issue309`, the
name of an upstream log file here."""
UPSTREAM = re.compile(r"[\w.-]+/[\w.-]+(?:\s+(?:issues?|PRs?|pull requests?))?\s*\Z", re.IGNORECASE)
"""What precedes an upstream project's issue: its `owner/repo`."""
HASH = re.compile(r"(?:^|(?<=[\s(\[]))#\d{1,5}\b(?![\w-])", re.MULTILINE)
"""A tracker reference `#23`: at a word's start, so `owner/repo#23`, `#!/bin/sh` and `color:#666`
are not one. Not looked for in Markdown, whose tables quote upstream commit titles ("(#826)")."""
NAME = re.compile(r"issue_?\d+", re.IGNORECASE)
"""A function, class or module named after an issue: `test_issue28_rules`."""


def _citations(text: str, *, hashes: bool = True) -> list[str]:
    return [
        m.group(0)
        for m in (*WORD.finditer(text), *(HASH.finditer(text) if hashes else ()))
        if not UPSTREAM.search(text[max(0, m.start() - 200) : m.start()])
    ]


def _python_prose(source: str) -> str:
    """A module's comments (without their `#`, so one may end in `owner/repo` and the next start
    with `issue N`) and docstrings, and its function and class names."""
    parts = [
        tok.string[1:]
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(ast.get_docstring(node, clean=False) or "")
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(NAME.sub(lambda m: f" issue {m.group(0)[5:].strip('_')} ", node.name))
    return "\n".join(parts)


def _files() -> list[Path]:
    out = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            rel = path.relative_to(ROOT).as_posix()
            if path == Path(__file__).resolve() or any(
                rel == d or rel.startswith(d + "/") for d in NOT_YET + SKIPPED
            ):
                continue
            if path.is_file() and "__pycache__" not in path.parts and path.suffix in SUFFIXES:
                out.append(path)
    return out


def test_no_comment_docstring_or_name_cites_an_issue_number() -> None:
    found = []
    for path in _files():
        text = path.read_text(errors="replace")
        prose = _python_prose(text) if path.suffix == ".py" else text
        hits = _citations(prose, hashes=path.suffix != ".md")
        found += [f"{path.relative_to(ROOT)}: {hit!r}" for hit in hits]
    assert not found, "say the behaviour instead:\n" + "\n".join(found)


def test_no_file_is_named_after_an_issue() -> None:
    named = [
        str(p.relative_to(ROOT)) for p in _files() if p.suffix == ".py" and NAME.search(p.stem)
    ]
    assert not named, named


@pytest.mark.parametrize(
    ("text", "cites"),
    [
        ("(issue 15: a state file two downs did not remove)", True),
        ("issues 27 and 28", True),
        ("Issue 30 item 8: --json", True),
        ("the next round (\n#23) wants", True),
        ("def test_issue28_rules", True),
        ("nccl_tests_issue309_h100_2node.txt rows", False),
        ("NVIDIA/nccl-tests issue 309, rescaled", False),
        ("(NVIDIA/nccl-tests\nissues 196, 290)", False),
        ("Azure/cyclecloud-slurm#123", False),
        ("ROCm/rccl issue #1423", False),
        ("#!/bin/sh", False),
        ("li.warn{color:#7e5109} .muted{color:#666}", False),
        ("no issue in 2 places", False),
        ("# 2 H100 nodes (NVIDIA/nccl-tests\n# issue 309)", False),
    ],
)
def test_what_counts_as_a_citation(text: str, cites: bool) -> None:
    """Python's names and comments as the scan reads them; any other text as it is."""
    source = f"{text}(): ..." if text.startswith("def ") else text
    prose = _python_prose(source) if text.startswith(("def ", "# ")) else text
    assert bool(_citations(prose)) is cites
