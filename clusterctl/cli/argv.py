"""Global flags anywhere on the command line, as kubectl and az take them.

click reads an option only at the level it belongs to: `--project-dir` after the subcommand, or
`-s`/`--json` before it, would be "No such option". This moves them where click reads them:
the root's flags to the front, a command's flags given before the command to its end (before any
`--`, after which the words belong to another program).
"""

from __future__ import annotations

ROOT_FLAGS = {"--project-dir": True, "--debug": False, "--verbose": False}
"""The root's options (True: takes a value). No short ones: `sandbox exec` passes words such as
`-v` on to the node's command."""
COMMAND_FLAGS = {"-s": True, "--stack": True, "--json": False}
"""Options nearly every command takes, accepted before the command too."""


def _split(word: str, flags: dict[str, bool]) -> tuple[str | None, bool]:
    """(the flag `word` is, whether the next word is its value)."""
    name, eq, _ = word.partition("=")
    if name in flags:
        return name, flags[name] and not eq
    return None, False


def normalise(args: list[str]) -> list[str]:
    end = args.index("--") if "--" in args else len(args)
    head, tail = args[:end], args[end:]
    root: list[str] = []
    command: list[str] = []
    rest: list[str] = []
    seen_command = False
    i = 0
    while i < len(head):
        word = head[i]
        flag, takes = _split(word, ROOT_FLAGS)
        if flag is None and not seen_command:
            flag, takes = _split(word, COMMAND_FLAGS)
            target = command
        else:
            target = root
        if flag is not None:
            target.extend(head[i : i + 1 + takes])
            i += 1 + takes
            continue
        if not word.startswith("-"):
            seen_command = True
        rest.append(word)
        i += 1
    return [*root, *rest, *command, *tail]
