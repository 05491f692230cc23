"""`up`/`down`'s progress in a log (not a terminal): a plain line per operation begun, with the
seconds since the start, then the summary; no live line or escape codes."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace as NS

from rich.console import Console

from clusterctl.lifecycle.progress import live


def _pre(op: str, urn: str):
    meta = NS(op=NS(value=op), type="azure-native:compute:VirtualMachine", urn=urn)
    return NS(resource_pre_event=NS(planning=False, metadata=meta), res_outputs_event=None,
              diagnostic_event=None, summary_event=None)  # fmt: skip


def _done(op: str):
    return NS(resource_pre_event=None, res_outputs_event=NS(metadata=NS(op=NS(value=op))),
              diagnostic_event=None, summary_event=None)  # fmt: skip


def test_a_log_gets_a_plain_line_per_operation_and_the_summary() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=200)
    with live(console, "up azure-h100") as (_log, on_event):
        on_event(_pre("create", "urn:pulumi:s::p::t::sched-vm"))
        on_event(_done("create"))
        on_event(_pre("same", "urn:pulumi:s::p::t::vnet"))  # unchanged: nothing said
        on_event(_pre("create", "urn:pulumi:s::p::t::gpu-pg0"))
        on_event(_done("create"))
        on_event(NS(resource_pre_event=None, res_outputs_event=None, diagnostic_event=None,
                    summary_event=NS(resource_changes={"create": 2, "same": 1})))  # fmt: skip
    lines = [x for x in buf.getvalue().splitlines() if x.strip()]
    assert [re.sub(r" \(\d+ s\)$", "", x) for x in lines] == [
        "up azure-h100: creating azure-native:compute:VirtualMachine sched-vm",
        "up azure-h100: creating azure-native:compute:VirtualMachine gpu-pg0",
        "up azure-h100: done (2 create)",
    ], lines
    assert "\x1b" not in buf.getvalue()
