"""The sandbox's stand-in health check, and returning our own drains to service.

Slurm runs HealthCheckProgram on each slurmd, which runs in its pod's UTS namespace, so
`hostname` there is the node name; slurmd also exports SLURMD_NODENAME (preferred when set).
A marker file named after the node (workdir/health/NODE) makes the check fail on that node only.
Like NHC, the program drains the node itself: Slurm ignores its exit code.
"""

from __future__ import annotations

import shlex

from .layout import Layout

STAND_IN = """#!/bin/sh
# Sandbox stand-in for the rendered health check: fails while {markers}/NODE exists.
node="${{SLURMD_NODENAME:-$(hostname)}}"
marker={markers}/"$node"
[ -e "$marker" ] || exit 0
reason="{prefix} $(head -c 200 "$marker" | tr -d '\\n')"
SLURM_CONF={conf} scontrol update nodename="$node" state=drain reason="$reason"
exit 1
"""


def stand_in_script(lay: Layout, reason_prefix: str) -> str:
    return STAND_IN.format(
        markers=shlex.quote(str(lay.health)),
        prefix=reason_prefix.replace('"', "").replace("$", "").replace("`", ""),
        conf=shlex.quote(str(lay.slurm_conf)),
    )


def parse_nodes(scontrol_oneliner: str) -> dict[str, dict[str, str]]:
    """`scontrol show node -o` -> {node: {key: value}}; Reason= runs to the end of the line."""
    nodes = {}
    for line in scontrol_oneliner.splitlines():
        if not line.startswith("NodeName="):
            continue
        head, _, reason = line.partition(" Reason=")
        fields = dict(kv.split("=", 1) for kv in head.split() if "=" in kv)
        if reason:
            fields["Reason"] = reason.rsplit(" [", 1)[0].strip()  # drop " [user@time]"
        nodes[fields["NodeName"]] = fields
    return nodes
