"""Nodes Slurm holds DOWN while their VM runs: no job can use them and they bill the full hourly
price (a deallocate refused until its run's deadline, an admin's DOWN, a slurmd that died).

`gpucl-power return` (a timer on the scheduler) reads the VM of every DOWN node, deallocates again
those the power program set DOWN, and writes what it found in two forms, both defined here: the
record `/sched/<cluster>/down-billing.json` that `clusterctl status` reads over ssh (`parse`), and
node_exporter's textfile that Prometheus scrapes for the NodeDownVmRunning alert (`to_textfile`).
Standard library only: it runs with the scheduler's power venv.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypedDict

RECORD_FILE = "down-billing.json"
METRIC = "gpucl_node_down_vm_running"
COST_METRIC = "gpucl_down_vm_running_usd_per_hour"
CHECKED_METRIC = "gpucl_down_vm_running_checked_timestamp_seconds"
BILLING_POWER = ("running", "starting", "stopping")
"""The backend's power states of a VM that still bills compute: up, coming up, or not yet
deallocated (Azure bills a VM until it is deallocated)."""


class DownBillingNode(TypedDict):
    node: str
    """The Slurm name."""
    vm: str
    """The VM: <scale set>_<instance id>."""
    power: str
    """Its power state when the check read it (one of BILLING_POWER)."""
    reason: str
    """Slurm's reason for the DOWN."""
    usdPerHour: float | None
    """The VM size's on-demand price (power.json pricesUsdPerHour); None: no catalog price."""
    deallocateSent: bool
    """True when the check sent a deallocate (the power program set it DOWN); False: someone
    else's DOWN, reported and left alone."""


class DownBillingRecord(TypedDict):
    checkedAt: float
    """When the check ran, epoch seconds."""
    nodes: list[DownBillingNode]


def record_path(cluster: str, root: Path) -> Path:
    return root / cluster / RECORD_FILE


def hourly(record: DownBillingRecord) -> float | None:
    """What the listed VMs bill per hour together; None when one has no price (unknown)."""
    prices = [n["usdPerHour"] for n in record["nodes"]]
    if any(p is None for p in prices):
        return None
    return round(sum(p for p in prices if p is not None), 2)


def to_json(record: DownBillingRecord) -> str:
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def parse(text: str) -> DownBillingRecord:
    """The record as `to_json` wrote it; ValueError naming what is wrong."""
    doc = json.loads(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise ValueError(f"{RECORD_FILE}: no 'nodes' list")
    nodes: list[DownBillingNode] = []
    for raw in doc["nodes"]:
        try:
            price = raw["usdPerHour"]
            nodes.append(
                DownBillingNode(
                    node=str(raw["node"]),
                    vm=str(raw["vm"]),
                    power=str(raw["power"]),
                    reason=str(raw["reason"]),
                    usdPerHour=None if price is None else float(price),
                    deallocateSent=bool(raw["deallocateSent"]),
                )
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{RECORD_FILE}: a node entry lacks {exc}") from None
    return DownBillingRecord(checkedAt=float(doc.get("checkedAt", 0)), nodes=nodes)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def to_textfile(record: DownBillingRecord) -> str:
    """node_exporter's textfile: one series per DOWN node whose VM bills, valued at its hourly
    price (1 when it has none: still a leak), their sum where every price is known, and when
    the check ran (an alert on a stale check sees the timer stop)."""
    lines = [
        f"# HELP {METRIC} A node Slurm holds DOWN whose VM still bills; the value is its "
        "on-demand USD per hour (1 when the catalog has no price).",
        f"# TYPE {METRIC} gauge",
    ]
    for n in sorted(record["nodes"], key=lambda n: n["node"]):
        price = n["usdPerHour"]
        lines.append(
            f'{METRIC}{{node="{_label(n["node"])}",vm="{_label(n["vm"])}",'
            f'power="{n["power"]}",reason="{_label(n["reason"])}",'
            f'deallocate_sent="{str(n["deallocateSent"]).lower()}"}} '
            f"{1 if price is None else price:.2f}"
        )
    total = hourly(record)
    if total is not None:
        lines += [
            f"# HELP {COST_METRIC} What the DOWN nodes' running VMs bill together, USD per hour.",
            f"# TYPE {COST_METRIC} gauge",
            f"{COST_METRIC} {total:.2f}",
        ]
    lines += [
        f"# HELP {CHECKED_METRIC} When gpucl-power return last read the DOWN nodes' VMs.",
        f"# TYPE {CHECKED_METRIC} gauge",
        f"{CHECKED_METRIC} {record['checkedAt']:.0f}",
    ]
    return "\n".join(lines) + "\n"


def write(record: DownBillingRecord, path: Path | None, textfile: Path | None) -> None:
    """Both forms (None: not that one), each atomically (a reader never sees half a file)."""
    forms = [] if path is None else [(path, to_json(record))]
    if textfile is not None:
        forms.append((textfile, to_textfile(record)))
    for target, text in forms:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        tmp.write_text(text)
        tmp.chmod(0o644)
        os.replace(tmp, target)
