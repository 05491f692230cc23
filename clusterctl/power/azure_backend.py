"""The Azure backend: scale-set VMs started and deallocated with azure-mgmt-compute.

Batched: one VMSS-level start or deallocate per scale set, always with an explicit, non-empty
`instanceIds` (without it Azure acts on every VM of the set: ComputeRP.json 2026-04-01,
VirtualMachineScaleSetVMInstanceIDs). A batch the service refuses outright (409: one bad VM,
quota, a failed state) is retried per instance, so one bad VM does not hold back the rest; a
batch still throttled at the deadline is not (a hundred single-VM calls would only be throttled
too). Requests are not polled to completion: polling reads Microsoft.Compute/locations/operations,
which cannot be scoped to the scale sets; `state` lists each scale set's VMs with their instance
views instead, one read per scale set (VirtualMachineScaleSetVMs_List, `$expand=instanceView`,
virtualMachines/read), where an allocation failure shows as
`ProvisioningState/failed/AllocationFailed`. `list` reads the same list for the name map
(names.py).

Throttling (Microsoft Learn, "Understand how Azure Resource Manager throttles requests" and
"Compute throttling limits": reads 250 a subscription refilled at 25/s; a scale set's actions a
small per-resource bucket refilled per minute): the SDK's own retries are off (retry_total=0) and
`_call` honours ARM's 429 (and 503) Retry-After itself, every wait logged, up to `deadline`: the
program sets one per run below slurmctld's ResumeTimeout or SuspendTimeout, shared by every call
of that run. Without one a call waits at most MAX_WAIT_S.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import time
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.identity import ManagedIdentityCredential
from azure.mgmt.compute import ComputeManagementClient

from .backend import THROTTLED, NodeState
from .names import NodeRef, by_scale_set

LOG = logging.getLogger("gpucl-power")
IMDS = "http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01"
RETRYABLE = {429, 503}
MAX_ATTEMPTS = 6
MAX_WAIT_S = 120.0
POWER = {
    "PowerState/running": "running",
    "PowerState/starting": "starting",
    "PowerState/deallocating": "stopping",
    "PowerState/stopping": "stopping",
    "PowerState/deallocated": "stopped",
    "PowerState/stopped": "stopped",
}


class AzureBackend:
    def __init__(
        self,
        client: Any,
        resource_group: str,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.client = client
        self.rg = resource_group
        self.sleep = sleep
        self.clock = clock
        self.deadline: float | None = None
        """`clock` time after which no retry waits (the program's run deadline)."""

    @classmethod
    def from_config(
        cls, cfg: dict[str, Any], credential: Any = None, **client_kwargs: Any
    ) -> AzureBackend:
        sub, rg = cfg.get("subscriptionId"), cfg.get("resourceGroup")
        if not sub or not rg:
            meta = _imds()
            sub, rg = sub or meta["subscriptionId"], rg or meta["resourceGroupName"]
        if credential is None:
            # The scheduler's user-assigned identity by its client id: without one IMDS picks an
            # identity only when the VM has exactly one (a second, or a system-assigned one added
            # by policy, and every power call fails with an ambiguous-identity error).
            if not cfg.get("clientId"):
                raise ValueError(
                    "power.json azure.clientId: the scheduler identity's client id is missing"
                )
            credential = ManagedIdentityCredential(client_id=cfg["clientId"])
        client = ComputeManagementClient(
            credential, sub, base_url=cfg.get("baseUrl"), retry_total=0, **client_kwargs
        )
        return cls(client, rg)

    def _call(self, what: str, fn: Callable[[], Any]) -> None:
        limit = self.deadline if self.deadline is not None else self.clock() + MAX_WAIT_S
        for attempt in itertools.count(1):
            try:
                fn()
                return
            except HttpResponseError as exc:
                status = exc.status_code or 0
                delay = _retry_after(exc)
                if (
                    status not in RETRYABLE
                    or (self.deadline is None and attempt >= MAX_ATTEMPTS)
                    or self.clock() + delay > limit
                ):
                    raise
                LOG.warning(
                    "%s: HTTP %d, retrying in %.0f s (attempt %d)", what, status, delay, attempt
                )
                self.sleep(delay)

    def _batch(self, verb: str, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        sets = self.client.virtual_machine_scale_sets
        vms = self.client.virtual_machine_scale_set_vms
        for scale_set, refs in by_scale_set(list(nodes)).items():
            ids = [r.instance_id for r in refs]
            assert ids, "never call a scale-set action without instance ids: it acts on all VMs"
            begin = getattr(sets, f"begin_{verb}")
            try:
                self._call(
                    f"{verb} {scale_set} {ids}",
                    functools.partial(
                        begin, self.rg, scale_set, {"instanceIds": ids}, polling=False
                    ),
                )
                LOG.info("%s %s instances %s: accepted", verb, scale_set, ids)
                out.update({r.name: None for r in refs})
                continue
            except HttpResponseError as exc:
                if exc.status_code in RETRYABLE:  # throttled to the deadline: so would each VM be
                    why = f"{THROTTLED} ({_why(exc)}, Retry-After {_retry_after(exc):.0f} s)"
                    LOG.error("%s %s %s: %s", verb, scale_set, ids, why)
                    out.update({r.name: why for r in refs})
                    continue
                LOG.warning(
                    "%s %s %s refused (%s); retrying one by one", verb, scale_set, ids, _why(exc)
                )
            one = getattr(vms, f"begin_{verb}")
            for r in refs:
                try:
                    self._call(
                        f"{verb} {r.name}",
                        functools.partial(one, self.rg, r.scale_set, r.instance_id, polling=False),
                    )
                    out[r.name] = None
                except HttpResponseError as exc:
                    out[r.name] = _why(exc)
        return out

    def start(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        return self._batch("start", nodes)

    def stop(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        return self._batch("deallocate", nodes)

    def delete(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        """VirtualMachineScaleSets_DeleteInstances (POST .../delete, instanceIds required), one
        call per scale set; a refusal is every node's answer in that set."""
        out: dict[str, str | None] = {}
        sets = self.client.virtual_machine_scale_sets
        for scale_set, refs in by_scale_set(list(nodes)).items():
            ids = [r.instance_id for r in refs]
            try:
                self._call(
                    f"delete {scale_set} {ids}",
                    functools.partial(
                        sets.begin_delete_instances,
                        self.rg,
                        scale_set,
                        {"instanceIds": ids},
                        polling=False,
                    ),
                )
                LOG.info("delete %s instances %s: accepted", scale_set, ids)
                out.update({r.name: None for r in refs})
            except HttpResponseError as exc:
                out.update({r.name: _why(exc) for r in refs})
        return out

    def _one(self, verb: str, node: NodeRef) -> str | None:
        op = getattr(self.client.virtual_machine_scale_set_vms, f"begin_{verb}")
        try:
            self._call(
                f"{verb} {node.name}",
                lambda: op(self.rg, node.scale_set, node.instance_id, polling=False),
            )
        except HttpResponseError as exc:
            return _why(exc)
        return None

    def reimage(self, node: NodeRef) -> str | None:
        return self._one("reimage", node)

    def redeploy(self, node: NodeRef) -> str | None:
        return self._one("redeploy", node)

    def list(self, scale_set: str) -> list[str]:
        """VirtualMachineScaleSetVMs_List (GET .../virtualMachines, pageable by nextLink): the
        instance ids that exist, in any power state. An error raises (never an empty answer)."""
        box: dict[str, list[str]] = {}

        def get() -> None:
            vms = self.client.virtual_machine_scale_set_vms.list(self.rg, scale_set)
            box["ids"] = [str(vm.instance_id) for vm in vms]

        try:
            self._call(f"list {scale_set}", get)
        except ResourceNotFoundError as exc:
            raise LookupError(f"{scale_set}: no such scale set ({_why(exc)})") from None
        except HttpResponseError as exc:
            raise RuntimeError(f"list {scale_set}: {_why(exc)}") from None
        return sorted(box["ids"], key=int)

    def state(self, nodes: Sequence[NodeRef]) -> dict[str, NodeState]:
        """One VirtualMachineScaleSetVMs_List with instance views per scale set, whatever the
        number of nodes asked about in it (a per-VM instance view read costs a subscription
        read each: 512 nodes, 512 reads per poll). A VM not listed, or a set that could not be
        read, is "unknown"."""
        out: dict[str, NodeState] = {}
        vms = self.client.virtual_machine_scale_set_vms
        for scale_set, refs in by_scale_set(list(nodes)).items():
            box: dict[str, dict[str, Any]] = {}

            def get(scale_set: str = scale_set, box: dict[str, dict[str, Any]] = box) -> None:
                listed = vms.list(self.rg, scale_set, expand="instanceView")
                box["views"] = {str(vm.instance_id): vm.instance_view for vm in listed}

            try:
                self._call(f"list {scale_set} (instance views)", get)
            except HttpResponseError as exc:
                LOG.warning("%s: VM list: %s", scale_set, _why(exc))
                out.update({r.name: NodeState("unknown", None) for r in refs})
                continue
            for r in refs:
                view = box["views"].get(r.instance_id)
                out[r.name] = _state(view) if view is not None else NodeState("unknown", None)
        return out


def _state(view: Any) -> NodeState:
    power, error = "unknown", None
    for status in getattr(view, "statuses", None) or []:
        code = status.code or ""
        if code in POWER:
            power = POWER[code]
        elif code.startswith("ProvisioningState/failed/"):
            error = code.rsplit("/", 1)[1]
            if status.message:
                error += f": {status.message}"
    return NodeState(power, error)  # type: ignore[arg-type]


def _retry_after(exc: HttpResponseError) -> float:
    headers = getattr(exc.response, "headers", None) or {}
    try:
        return max(0.0, float(headers.get("Retry-After", 5)))
    except ValueError:
        return 5.0


def _why(exc: HttpResponseError) -> str:
    code = getattr(getattr(exc, "error", None), "code", None)
    message = getattr(getattr(exc, "error", None), "message", None)
    if code:
        return f"{code}: {message}" if message else code
    return f"HTTP {exc.status_code}: {exc.reason}"


def _imds() -> dict[str, Any]:
    req = urllib.request.Request(IMDS, headers={"Metadata": "true"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        doc: dict[str, Any] = json.load(resp)
    return doc
