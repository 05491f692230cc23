"""`clusterctl doctor`: what this machine lacks for the sandbox and the cloud path, as `sky check`.

The host programs come from clusterctl/sandbox/host_tools.py (HOST_TOOLS, the one list, which
`sandbox up` also checks before it starts); this adds the cloud path's tools.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import typer

from clusterctl.cli.common import JsonOpt, out
from clusterctl.sandbox.host_tools import HOST_TOOLS, found_at

CLOUD_TOOLS: tuple[tuple[str, str], ...] = (
    ("pulumi", "`clusterctl up`/`down` run Pulumi: https://www.pulumi.com/docs/install/"),
    ("az", "Azure stacks: credentials (`az login`)"),
    ("aws", "EKS stacks: `pulumi up` runs `aws eks get-token`"),
    ("kubectl", "`clusterctl validate` on Kubernetes stacks"),
)


def register(app: typer.Typer) -> None:
    app.command()(doctor)


def doctor(as_json: JsonOpt = False) -> None:
    """Check this machine for the programs the sandbox and the cloud path run.

    Exits 1 when a sandbox tool is missing (each named with its Debian package); the cloud tools
    are reported, not required: `plan` needs none of them.
    """
    host = [(t, found_at(t.name)) for t in HOST_TOOLS]
    cloud = [(name, why, found_at(name)) for name, why in CLOUD_TOOLS]
    missing = [t for t, at in host if at is None]
    if as_json:
        doc = {
            "host": [{**asdict(t), "found": at} for t, at in host],
            "cloud": [{"name": n, "why": w, "found": at} for n, w, at in cloud],
            "ok": not missing,
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        for tool, at in host:
            if at:
                out.print(f"ok       {tool.name} ({at})", highlight=False, soft_wrap=True)
            else:
                out.print(
                    f"missing  {tool.name}: {tool.why}; install it: "
                    f"sudo apt-get install {tool.package}",
                    highlight=False,
                )
        for name, why, at in cloud:
            state = f"ok       {name} ({at})" if at else f"absent   {name}: needed for {why}"
            out.print(state, highlight=False, soft_wrap=True)
        if missing:
            packages = " ".join(dict.fromkeys(t.package for t in missing))
            out.print(
                f"the sandbox needs: sudo apt-get install {packages}",
                highlight=False,
                soft_wrap=True,
            )
    if missing:
        raise typer.Exit(1)
