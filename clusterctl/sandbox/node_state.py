"""Reading node states, and returning to service only the nodes we drained ourselves."""

from __future__ import annotations

import os

from .health import parse_nodes
from .runtime import exec


def node_info(workdir: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """`scontrol show node -o` of the sandbox, as {node: {field: value}}."""
    return parse_nodes(exec(workdir, ["scontrol", "show", "node", "-o"], check=True).stdout)


def resume_our_drains(workdir: str | os.PathLike[str], prefix: str) -> list[str]:
    """Resume drained nodes whose reason starts with `prefix`; others' drains are left alone.

    Returns the nodes resumed. A node whose health check still fails is drained again by it.
    """
    resumed = []
    for name, fields in sorted(node_info(workdir).items()):
        drained = "DRAIN" in fields.get("State", "")
        if drained and fields.get("Reason", "").startswith(prefix):
            exec(workdir, ["scontrol", "update", f"nodename={name}", "state=resume"], check=True)
            resumed.append(name)
    return resumed
