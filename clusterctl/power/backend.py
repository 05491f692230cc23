"""What the power program needs of a cloud: the small protocol every backend implements.

Azure (azure_backend.AzureBackend) starts and deallocates scale-set VMs; the sandbox implements
the same calls by starting and stopping node containers. Requests are fire-and-check: a call
returns once the platform has accepted it, and `state` tells where each node is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from .names import NodeRef

THROTTLED = "throttled past the run's deadline"
"""How a backend's refusal starts when the platform asked for a wait the run cannot afford: the
program sends that request no more in this run (another would be throttled too)."""

Power = Literal["running", "starting", "stopping", "stopped", "unknown"]


@dataclass(frozen=True)
class NodeState:
    power: Power
    error: str | None = None
    """Why the platform could not bring the node up (e.g. 'AllocationFailed: ...'), else None."""


class PowerBackend(Protocol):
    def list(self, scale_set: str) -> list[str]:
        """The instance ids of the VMs that exist in a scale set now, whatever their power state
        (the name map's view of the platform). LookupError when the scale set does not exist;
        any other error raises too (never an empty answer for a set that could not be read)."""
        ...

    def state(self, nodes: Sequence[NodeRef]) -> dict[str, NodeState]:
        """The power state of each node, keyed by node name."""
        ...

    def start(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        """Ask for the nodes to start: node name -> None (accepted) or why it was refused.
        Starting a running node is accepted and changes nothing (idempotent)."""
        ...

    def stop(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        """Ask for the nodes to stop billing compute (Azure: deallocate); idempotent."""
        ...

    def delete(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        """Ask for exactly these VMs to be deleted (a shrink: Azure's own choice on a capacity
        decrease is by instance id, not by Slurm name): node name -> None or why refused."""
        ...

    def reimage(self, node: NodeRef) -> str | None:
        """A fresh OS disk from the image, same name (`clusterctl node replace`)."""
        ...

    def redeploy(self, node: NodeRef) -> str | None:
        """Move the VM to a new host (new hardware), same name and disks."""
        ...
