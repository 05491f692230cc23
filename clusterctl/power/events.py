"""`gpucl-events CLUSTER`: a GPU node watches Azure Scheduled Events (IMDS) for itself.

On a Preempt (spot eviction, at least 30 s notice) or Terminate notice the node drains itself
with a "<prefix> spot:" reason so nothing new lands on it, requeues its jobs onto other nodes,
approves the event (it may then proceed at once) and asks slurmctld to power it down, so it comes
back as an ordinary powered-down node (the scale set's eviction policy is Deallocate: the VM and
its name survive). A Reboot, Redeploy or Freeze only drains it: running jobs may finish before
NotBefore, and the health check resumes the node after the maintenance (its drain prefix).
A drain someone else set (an admin, a health tier, validate) is never overwritten or lifted.
Facts: MicrosoftDocs/azure-docs articles/virtual-machines/linux/scheduled-events.md
(tests/data/azure-rest/SOURCES.md). Standard library only: it runs with the node's python3.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import slurm
from .names import DRAIN_PREFIX, SCHED, load_names, names_file, node_name

EVENTS_URL = "http://169.254.169.254/metadata/scheduledevents?api-version=2020-07-01"
COMPUTE_URL = "http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01"
EVICTING = {"Preempt", "Terminate"}
MAINTENANCE = {"Reboot", "Redeploy", "Freeze"}
LOG = logging.getLogger("gpucl-events")


@dataclass
class Watcher:
    vm_name: str
    """This VM as IMDS and the events' Resources name it: <scale set>_<instance id>."""
    node: str
    reason_prefix: str = DRAIN_PREFIX
    runner: slurm.Runner = slurm.run
    approve: Callable[[str], None] = lambda event_id: None
    handled: set[str] = field(default_factory=set)

    def handle(self, document: dict[str, Any]) -> list[str]:
        """Act on the events in one IMDS document that name this VM; return what was done."""
        done = []
        for event in document.get("Events") or []:
            event_id = event.get("EventId", "")
            kind = event.get("EventType", "")
            if event_id in self.handled or self.vm_name not in (event.get("Resources") or []):
                continue
            if kind in EVICTING:
                done += self._evict(event_id, kind, event)
            elif kind in MAINTENANCE:
                if (foreign := self._foreign_drain()) is not None:
                    done.append(f"keep {self.node}'s drain '{foreign}': {kind}")
                    self.handled.add(event_id)
                    continue
                when = event.get("NotBefore") or "now"
                reason = f"{self.reason_prefix} maintenance: {kind} at {when} ({event_id[:8]})"
                slurm.update([self.node], "DRAIN", reason, self.runner)
                done.append(f"drain {self.node}: {kind}")
            else:
                continue
            self.handled.add(event_id)
        return done

    def _foreign_drain(self) -> str | None:
        """The reason of a drain someone else set on this node (an admin, a health tier,
        validate), which this watcher must neither overwrite nor have lifted; None otherwise."""
        state, why = slurm.states([self.node], self.runner).get(self.node, ("", ""))
        own = (f"{self.reason_prefix} spot:", f"{self.reason_prefix} maintenance:")
        if state.startswith("drain") and not why.startswith(own):
            return why
        return None

    def _evict(self, event_id: str, kind: str, event: dict[str, Any]) -> list[str]:
        what = "spot eviction" if kind == "Preempt" else "termination"
        reason = f"{self.reason_prefix} spot: {what} notice ({event_id[:8]})"
        foreign = self._foreign_drain()
        if foreign is None:
            slurm.update([self.node], "DRAIN", reason, self.runner)
            done = [f"drain {self.node}: {kind}"]
        else:
            done = [f"keep {self.node}'s drain '{foreign}': {kind}"]
        jobs = slurm.jobs_on(self.node, self.runner)
        slurm.requeue(jobs, self.runner)
        done.append(f"requeue {','.join(jobs) or 'nothing'}")
        try:
            self.approve(event_id)
            done.append(f"approve {event_id}")
        except OSError as exc:
            LOG.warning("approving %s failed: %s", event_id, exc)
        if foreign is None:
            # Slurm clears the drain of a node it powers down on request: it comes back as an
            # ordinary powered-down node. A node drained by someone else is not asked to power
            # down (that would clear their drain); Azure deallocates it all the same, and Slurm
            # marks it DOWN when slurmd stops answering, the drain kept.
            slurm.update([self.node], "POWER_DOWN_FORCE", reason, self.runner)
            done.append(f"power down {self.node}")
        return done


def own_node(cluster: str, vm_name: str, root: Path = SCHED) -> str:
    """This VM's Slurm name, from the scheduler's name map (read once; without a map, the old
    rule). A VM the map does not name raises LookupError."""
    return node_name(cluster, vm_name, load_names(names_file(cluster, root)))


def imds_get(url: str) -> dict[str, Any]:
    req = urllib.request.Request(url, headers={"Metadata": "true"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        doc: dict[str, Any] = json.load(resp)
    return doc


def imds_approve(event_id: str) -> None:
    body = json.dumps({"StartRequests": [{"EventId": event_id}]}).encode()
    req = urllib.request.Request(
        EVENTS_URL,
        data=body,
        method="POST",
        headers={"Metadata": "true", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpucl-events")
    parser.add_argument("cluster")
    parser.add_argument("--reason-prefix", default=DRAIN_PREFIX)
    parser.add_argument("--state", type=Path, default=Path("/var/lib/gpucl/events-handled.json"))
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--names-root", type=Path, default=SCHED, help="holds <cluster>/names.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="gpucl-events %(levelname)s %(message)s")
    vm_name = imds_get(COMPUTE_URL)["name"]
    try:
        node = own_node(args.cluster, vm_name, args.names_root)
    except (LookupError, ValueError, OSError) as exc:
        LOG.error("no Slurm name for %s: %s", vm_name, exc)
        return 1
    handled = set(json.loads(args.state.read_text())) if args.state.exists() else set()
    watcher = Watcher(
        vm_name,
        node,
        args.reason_prefix,
        approve=imds_approve,
        handled=handled,
    )
    LOG.info("watching scheduled events for %s (node %s)", vm_name, watcher.node)
    while True:
        try:
            for line in watcher.handle(imds_get(EVENTS_URL)):
                LOG.info("%s", line)
            args.state.parent.mkdir(parents=True, exist_ok=True)
            args.state.write_text(json.dumps(sorted(watcher.handled)))
        except (OSError, ValueError, RuntimeError) as exc:
            LOG.warning("%s", exc)
        time.sleep(args.interval)


if __name__ == "__main__":
    sys.exit(main())
