"""Every command's --help reads as written: no doubled `%%`, no Python type as a metavar."""

from __future__ import annotations

import re

import typer


def _helps() -> list[tuple[list[str], str]]:
    from clusterctl.cli import app

    found = []

    def walk(cmd, path: list[str]) -> None:
        ctx = cmd.make_context(" ".join(["clusterctl", *path]), [], resilient_parsing=True)
        found.append((path, cmd.get_help(ctx)))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_help_has_no_escaped_percent_and_no_python_types() -> None:
    helps = _helps()
    assert len(helps) > 15
    for path, text in helps:
        assert "%%" not in text, path
        assert not re.search(r"<(list|dict|tuple)\[", text), (path, text)
