"""A local stand-in for the ARM endpoints the power program calls, and a checker that holds each
request to Azure's published REST spec (tests/data/azure-rest/, see SOURCES.md there)."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

SPEC_DIR = Path(__file__).resolve().parents[1] / "data" / "azure-rest"
API_VERSION = "2026-04-01"
VMSS = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft.Compute/"
    r"virtualMachineScaleSets/(?P<vmss>[^/]+)(?:/virtualMachines/(?P<id>[^/]+))?/(?P<op>[A-Za-z]+)$"
)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: bytes


@dataclass
class Vm:
    power: str = "deallocated"
    refuse: str | None = None
    """Refuse any request naming this VM synchronously: 409 with this error code."""
    allocation_fails: bool = False
    """Accept a start, then show ProvisioningState/failed/AllocationFailed."""
    failed: str | None = None


@dataclass
class Arm:
    vms: dict[tuple[str, str], Vm] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    throttle: int = 0
    """Answer this many POSTs with 429 + Retry-After before serving."""
    retry_after: str = "1"

    deleted_sets: set[str] = field(default_factory=set)
    """Scale sets Pulumi deleted (a partition or a scale set left the stack): ARM answers 404."""
    page_size: int = 2
    """VirtualMachineScaleSetVMs_List answers this many VMs a page, then a nextLink."""

    def page(self, vmss: str, url, host: str) -> dict:
        ids = sorted((i for s, i in self.vms if s == vmss), key=int)
        skip = int(parse_qs(url.query).get("$skiptoken", ["0"])[0])
        expand = parse_qs(url.query).get("$expand", [""])[0]
        body: dict = {
            "value": [
                {
                    "name": f"{vmss}_{i}",
                    "instanceId": i,
                    "properties": {"vmId": f"vm-{vmss}-{i}"}
                    | ({"instanceView": self.view(vmss, i)} if expand == "instanceView" else {}),
                }
                for i in ids[skip : skip + self.page_size]
            ]
        }
        if skip + self.page_size < len(ids):
            query = f"api-version={API_VERSION}&$skiptoken={skip + self.page_size}"
            query += f"&$expand={expand}" if expand else ""
            body["nextLink"] = f"http://{host}{url.path}?{query}"
        return body

    def view(self, vmss: str, inst: str) -> dict:
        """A VM's instance view as GetInstanceView and List's `$expand=instanceView` give it."""
        vm = self.vms[(vmss, inst)]
        statuses = [{"code": f"PowerState/{vm.power}", "level": "Info"}]
        if vm.failed:
            statuses.insert(
                0,
                {
                    "code": f"ProvisioningState/failed/{vm.failed}",
                    "level": "Error",
                    "message": "no capacity for the size in this region",
                },
            )
        return {"statuses": statuses}

    def act(self, verb: str, vmss: str, ids: list[str]) -> tuple[int, dict | None]:
        targets = [(vmss, i) for i in ids]
        for key in targets:
            vm = self.vms.get(key)
            if vm is None:
                return 404, {"error": {"code": "NotFound", "message": f"{key} not found"}}
            if vm.refuse:
                return 409, {"error": {"code": vm.refuse, "message": f"refused {key[1]}"}}
        for key in targets:
            vm = self.vms[key]
            if verb == "start":
                if vm.allocation_fails:
                    vm.failed = "AllocationFailed"
                else:
                    vm.power = "running"
            elif verb == "deallocate":
                vm.power = "deallocated"
            elif verb in ("reimage", "redeploy"):
                vm.power = "running"
            elif verb == "delete":
                del self.vms[key]
        return 202, None


def serve(arm: Arm):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status: int, body: dict | None, headers: dict | None = None) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            arm.requests.append(Request(self.command, url.path, parse_qs(url.query), body))
            m = VMSS.match(url.path)
            if not m:
                return self._send(404, {"error": {"code": "NoRoute", "message": url.path}})
            if self.command == "POST" and arm.throttle > 0:
                arm.throttle -= 1
                return self._send(
                    429,
                    {"error": {"code": "TooManyRequests", "message": "throttled"}},
                    {"Retry-After": arm.retry_after},
                )
            vmss, inst, op = m["vmss"], m["id"], m["op"]
            if vmss in arm.deleted_sets:
                msg = (
                    f"The Resource 'Microsoft.Compute/virtualMachineScaleSets/{vmss}' was not found"
                )
                return self._send(404, {"error": {"code": "ResourceNotFound", "message": msg}})
            if self.command == "GET" and op == "virtualMachines" and inst is None:
                return self._send(200, arm.page(vmss, url, self.headers.get("Host", "")))
            if self.command == "GET" and op == "instanceView" and inst is not None:
                vm = arm.vms.get((vmss, inst))
                if vm is None:
                    return self._send(404, {"error": {"code": "NotFound", "message": "no"}})
                return self._send(200, arm.view(vmss, inst))
            if self.command == "POST":
                ids = [inst] if inst is not None else json.loads(body or b"{}").get("instanceIds")
                status, err = arm.act(op, vmss, ids or [])
                return self._send(status, err, {"Retry-After": "0"} if status == 202 else None)
            return self._send(405, {"error": {"code": "Method", "message": self.command}})

        do_GET = do_POST = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class StubCredential:
    """What azure-core asks of a credential; no token service is reached."""

    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken

        return AccessToken("stand-in-token", 4102444800)


def spec_operations() -> list[dict]:
    """Every (method, path regex, parameters, file) in the vendored spec fragments."""
    definitions = json.loads((SPEC_DIR / "definitions.2026-04-01.json").read_text())["definitions"]
    ops = []
    for path in sorted(SPEC_DIR.glob("*.2026-04-01.json")):
        doc = json.loads(path.read_text())
        for template, methods in doc.get("paths", {}).items():
            pattern = re.sub(r"\{[^}]+\}", "[^/]+", template)
            for method, op in methods.items():
                ops.append(
                    {
                        "method": method.upper(),
                        "regex": re.compile(f"^{pattern}$"),
                        "params": op.get("parameters", []),
                        "operationId": op["operationId"],
                        "file": path.name,
                        "definitions": definitions,
                    }
                )
    return ops


def check_against_spec(req: Request, ops: list[dict]) -> str:
    """The operationId the request matches; AssertionError where it strays from the spec."""
    matches = [o for o in ops if o["method"] == req.method and o["regex"].match(req.path)]
    assert len(matches) == 1, f"{req.method} {req.path} matches {len(matches)} spec operations"
    op = matches[0]
    assert req.query.get("api-version") == [API_VERSION], (op["operationId"], req.query)
    body_params = [p for p in op["params"] if p.get("in") == "body"]
    if not body_params:
        assert not req.body, f"{op['operationId']} takes no body; got {req.body!r}"
        return op["operationId"]
    param = body_params[0]
    if not req.body:
        assert not param.get("required"), f"{op['operationId']} needs a body"
        return op["operationId"]
    name = param["schema"]["$ref"].rsplit("/", 1)[1]
    schema = op["definitions"][name]
    body = json.loads(req.body)
    assert isinstance(body, dict)
    for key, value in body.items():
        assert key in schema["properties"], f"{key} is not in {name} ({op['file']})"
        prop = schema["properties"][key]
        if prop["type"] == "array":
            assert isinstance(value, list)
            assert all(isinstance(v, str) for v in value), value
        elif prop["type"] == "boolean":
            assert isinstance(value, bool)
    for key in schema.get("required", []):
        assert key in body, f"{name} requires {key}"
    return op["operationId"]


def standin_auth_policy():
    """The stand-in speaks plain HTTP, where azure-core's bearer policy refuses to send a token:
    this policy adds the same header a managed-identity token would."""
    from azure.core.pipeline.policies import SansIOHTTPPolicy

    class StandInAuth(SansIOHTTPPolicy):
        def on_request(self, request):
            request.http_request.headers["Authorization"] = "Bearer stand-in-token"

    return StandInAuth()
