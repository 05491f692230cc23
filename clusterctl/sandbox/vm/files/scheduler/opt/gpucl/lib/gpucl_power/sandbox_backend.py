"""The sandbox's power backend: the same calls, sent to the VM sandbox's lab server, which starts
and stops node containers (clusterctl/sandbox/vm/power.py).

Not part of the product: the sandbox places this file beside the power program's modules on its
scheduler (/opt/gpucl/lib/gpucl_power), and a power.d override naming `"backend": "sandbox"`;
gpucl-power's make_backend() loads it as it would any placed `<name>_backend.py`. Hence the
relative imports: they resolve inside gpucl_power. Standard library only.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence

from .backend import NodeState
from .names import NodeRef
from .names import vm_name as azure_vm_name

TIMEOUT_S = 300.0


def vm_name(ref: NodeRef) -> str:
    return azure_vm_name(ref.scale_set, ref.instance_id)


class SandboxBackend:
    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def _call(self, action: str, refs: Sequence[NodeRef]) -> dict:
        body = json.dumps({"vms": [vm_name(r) for r in refs]}).encode()
        req = urllib.request.Request(
            f"{self.url}/{action}",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as exc:
            try:
                why = json.load(exc).get("error", exc.reason)
            except ValueError:
                why = exc.reason
            raise RuntimeError(f"sandbox power {action}: HTTP {exc.code}: {why}") from None

    def _each(self, action: str, refs: Sequence[NodeRef]) -> dict[str, str | None]:
        if not refs:
            return {}
        try:
            out = self._call(action, refs)
        except (OSError, RuntimeError) as exc:
            return {r.name: str(exc) for r in refs}
        return {r.name: out.get(vm_name(r)) for r in refs}

    def list(self, scale_set: str) -> list[str]:
        body = json.dumps({"vms": [scale_set]}).encode()
        req = urllib.request.Request(
            f"{self.url}/list",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                out = json.load(resp)
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"sandbox power list: HTTP {exc.code}") from None
        ids = out.get(scale_set)
        if not isinstance(ids, list):
            raise RuntimeError(f"sandbox power list: no answer for {scale_set}: {out}")
        return sorted((str(i) for i in ids), key=int)

    def state(self, nodes: Sequence[NodeRef]) -> dict[str, NodeState]:
        if not nodes:
            return {}
        out = self._call("state", nodes)
        states = {}
        for r in nodes:
            got = out.get(vm_name(r)) or {}
            power = got.get("power", "unknown")
            states[r.name] = NodeState(
                power if power in ("running", "stopped") else "unknown", got.get("error")
            )
        return states

    def start(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        return self._each("start", nodes)

    def stop(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        return self._each("deallocate", nodes)

    def delete(self, nodes: Sequence[NodeRef]) -> dict[str, str | None]:
        return self._each("delete", nodes)

    def reimage(self, node: NodeRef) -> str | None:
        return self._each("reimage", [node])[node.name]

    def redeploy(self, node: NodeRef) -> str | None:
        return self._each("redeploy", [node])[node.name]


def make(settings: dict) -> SandboxBackend:
    """gpucl-power's entry point for a placed backend (program.make_backend)."""
    if not settings.get("url"):
        raise ValueError("the sandbox backend needs sandbox.url")
    return SandboxBackend(settings["url"])
