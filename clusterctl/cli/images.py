"""`clusterctl images -s STACK`: what each VM role of a stack boots, whether it is pinned, where
the pin comes from and how to move it."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.markup import escape

from clusterctl.cli.common import JsonOpt, StackOpt, out


def register(app: typer.Typer) -> None:
    app.command()(images)


def images(
    stack: StackOpt,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="FIELD=VALUE", help="Override a field, as plan takes it."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the image each role of STACK boots (scheduler, login, jump host, each partition),
    its version pin and source, and the commands that move the pin. Offline."""
    from clusterctl.spec.catalog import catalog
    from clusterctl.spec.images import how_to_move, parse_azure_image, role_images
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec(stack, set_ or [])
    rows: list[dict[str, str | bool]] = []
    for item in role_images(spec, catalog()):
        parsed = parse_azure_image(item.image)
        rows.append(
            {
                "role": item.role,
                "field": item.field.removeprefix("gpu-clusters:cluster."),
                "image": item.image,
                "pinned": bool(parsed and parsed.pinned and not parsed.placeholder),
                "from": item.origin,
                "source": item.source,
                "driverStack": item.hpc_image,
                "move": how_to_move(spec, item),
            }
        )
    if as_json:
        doc = {"stack": stack, "images": rows}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    if not rows:
        out.print(
            f"stack {stack}: its nodes boot the {spec.cloud} Kubernetes service's node images, "
            "which the service chooses and upgrades; no image is pinned in the stack",
            highlight=False,
        )
        return
    for row in rows:
        text = {k: str(v) for k, v in row.items()}
        state = "pinned" if row["pinned"] else "NOT PINNED"
        out.print(f"[bold]{escape(text['role'])}[/]: {escape(text['image'])} ({state})")
        out.print(f"  field:  {text['field']} (from {escape(text['from'])})", highlight=False)
        if row["source"] != "the stack":
            out.print(f"  source: {escape(text['source'])}", highlight=False)
        out.print(f"  move:   {escape(text['move'])}", highlight=False)
