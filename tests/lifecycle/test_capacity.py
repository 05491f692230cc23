"""Before `up` builds anything it asks Azure whether each VM size is offered to the subscription in
the region (and zones) and whether the vCPU quota covers what the update adds (values
only the cloud can check). azure-mgmt-compute talks to a local stand-in that holds every request
and every answer to the published REST spec (tests/data/azure-rest/skus.2021-07-01.json,
usages.2024-11-01.json; SOURCES.md there)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from clusterctl.lifecycle.capacity import SPOT, TOTAL, CapacityUnavailable, added, judge, needs
from clusterctl.lifecycle.capacity_azure import AzureCapacity
from clusterctl.spec.catalog import catalog
from clusterctl.spec.load import load_stack_spec
from tests.power.armstandin import StubCredential, standin_auth_policy

SPEC_DIR = Path(__file__).resolve().parents[1] / "data" / "azure-rest"
SUB = "00000000-0000-0000-0000-00000000c0de"
# What azure-mgmt-compute 39.0.0 sends (operations/_operations.py build_*_request).
API_VERSIONS = {"ResourceSkus_List": "2021-07-01", "Usage_List": "2026-04-01"}
H100 = "Standard_ND96isr_H100_v5"
H100_FAMILY = "standardNDSH100v5Family"
HEAD_FAMILY = "standardDSv5Family"


def sku(name: str, family: str, region: str = "eastus", restrictions: list | None = None) -> dict:
    return {
        "resourceType": "virtualMachines", "name": name, "tier": "Standard", "family": family,
        "locations": [region], "locationInfo": [{"location": region, "zones": ["1", "2", "3"]}],
        "capabilities": [{"name": "vCPUs", "value": "96"}], "restrictions": restrictions or [],
    }  # fmt: skip


def usage(name: str, limit: int, current: int = 0) -> dict:
    return {"unit": "Count", "currentValue": current, "limit": limit,
            "name": {"value": name, "localizedValue": name}}  # fmt: skip


def roomy() -> tuple[list[dict], list[dict]]:
    return (
        [sku(H100, H100_FAMILY), sku("Standard_D8s_v5", HEAD_FAMILY)],
        [usage(TOTAL, 1000), usage(H100_FAMILY, 400), usage(HEAD_FAMILY, 100), usage(SPOT, 500)],
    )


# -- the stand-in and the spec it is held to ------------------------------------------------


def _fragments() -> list[dict]:
    ops = []
    for name in ("skus.2021-07-01.json", "usages.2024-11-01.json"):
        doc = json.loads((SPEC_DIR / name).read_text())
        for template, methods in doc["paths"].items():
            for method, op in methods.items():
                pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
                ops.append({"regex": re.compile(pattern), "method": method.upper(), "op": op,
                            "definitions": doc["definitions"]})  # fmt: skip
    return ops


def conforms(value, schema: dict, defs: dict, where: str = "$") -> list[str]:
    """The response body against the spec's definition: types, enums, required keys, no extras."""
    if "$ref" in schema:
        return conforms(value, defs[schema["$ref"].rsplit("/", 1)[1]], defs, where)
    problems = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} not in {schema['enum']}")
    kind = schema.get("type", "object" if "properties" in schema else None)
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        props = schema.get("properties", {})
        problems += [f"{where}.{k}: not in the spec" for k in value if k not in props]
        problems += [f"{where}: lacks {k}" for k in schema.get("required", []) if k not in value]
        for k, v in value.items():
            if k in props and v is not None:
                problems += conforms(v, props[k], defs, f"{where}.{k}")
    elif kind == "array":
        if not isinstance(value, list):
            return [f"{where}: not an array"]
        for i, v in enumerate(value):
            problems += conforms(v, schema["items"], defs, f"{where}[{i}]")
    elif kind == "string" and not isinstance(value, str):
        problems.append(f"{where}: not a string")
    elif kind == "integer" and not (isinstance(value, int) and not isinstance(value, bool)):
        problems.append(f"{where}: not an integer")
    return problems


class Standin:
    def __init__(self, skus: list[dict], usages: list[dict]):
        self.skus, self.usages, self.seen, self.errors = skus, usages, [], []
        ops = _fragments()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                match = [o for o in ops if o["method"] == "GET" and o["regex"].match(url.path)]
                if len(match) != 1:
                    outer.errors.append(f"GET {url.path} matches {len(match)} spec operations")
                    return self._send(404, {"error": {"code": "NotFound", "message": url.path}})
                op = match[0]["op"]
                outer.seen.append((op["operationId"], query))
                if query.get("api-version") != [API_VERSIONS[op["operationId"]]]:
                    outer.errors.append(f"{op['operationId']}: api-version {query}")
                if op["operationId"] == "ResourceSkus_List":
                    body = {"value": outer.skus}
                    if query.get("$filter") != ["location eq 'eastus'"]:
                        outer.errors.append(f"ResourceSkus_List: $filter {query.get('$filter')}")
                else:
                    body = {"value": outer.usages}
                schema = op["responses"]["200"]["schema"]
                outer.errors += conforms(body, schema, match[0]["definitions"])
                self._send(200, body)

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def capacity(self) -> AzureCapacity:
        from azure.mgmt.compute import ComputeManagementClient

        client = ComputeManagementClient(
            StubCredential(), SUB, base_url=f"http://127.0.0.1:{self.server.server_address[1]}",
            authentication_policy=standin_auth_policy(), retry_total=0,
        )  # fmt: skip
        return AzureCapacity(client)


@pytest.fixture
def standin():
    made: list[Standin] = []

    def make(skus, usages) -> Standin:
        made.append(Standin(skus, usages))
        return made[-1]

    yield make
    for s in made:
        s.server.shutdown()
        assert s.errors == [], s.errors  # every request and answer held to the spec


def _ask(standin, skus, usages, *overrides: str, before: tuple[str, ...] | None = None):
    spec, _ = load_stack_spec("azure-h100", list(overrides))
    stand = standin(skus, usages)
    got_skus, got_usages = stand.capacity().fetch(spec.region)
    assert [op for op, _ in stand.seen] == ["ResourceSkus_List", "Usage_List"]
    old = needs(load_stack_spec("azure-h100", list(before))[0], catalog()) if before else None
    return judge(added(needs(spec, catalog()), old), spec.region, got_skus, got_usages)


# -- what Azure answers, judged ---------------------------------------------------------------


def test_room_for_the_stack_is_no_problem(standin) -> None:
    assert _ask(standin, *roomy()) == []


def test_a_family_quota_too_small_names_the_field_numbers_and_fix(standin) -> None:
    skus, usages = roomy()
    usages[1] = usage(H100_FAMILY, 200, current=96)  # 104 free, 2 x 96 wanted
    (problem,) = _ask(standin, skus, usages)
    assert problem.startswith("gpu-clusters:cluster.partitions[0].sku: 192 vCPUs needed in eastus")
    assert f"({H100_FAMILY}) has 104 free (limit 200, 96 in use)" in problem
    assert "request an increase" in problem


def test_a_size_restricted_for_the_subscription_or_not_offered_is_refused(standin) -> None:
    skus, usages = roomy()
    skus[0]["restrictions"] = [{"type": "Location", "values": ["eastus"],
                                "restrictionInfo": {"locations": ["eastus"]},
                                "reasonCode": "NotAvailableForSubscription"}]  # fmt: skip
    (problem,) = _ask(standin, skus, usages)
    assert f"partitions[0].sku: {H100} is restricted for your subscription in eastus" in problem
    assert "(NotAvailableForSubscription)" in problem
    (missing,) = _ask(standin, skus[1:], usages)
    assert missing.startswith(f"gpu-clusters:cluster.partitions[0].sku: {H100} is not offered in")


def test_the_regional_total_counts_every_regular_vm(standin) -> None:
    skus, usages = roomy()
    usages[0] = usage(TOTAL, 150)  # 192 + 8 wanted
    (problem,) = _ask(standin, skus, usages)
    assert "headNode.sku, gpu-clusters:cluster.partitions[0].sku: 200 vCPUs" in problem
    assert "the regional vCPU total (cores) has 150 free" in problem


def test_spot_nodes_count_against_the_spot_quota_not_their_family(standin) -> None:
    skus, usages = roomy()
    usages[1] = usage(H100_FAMILY, 0)  # no regular H100 quota at all: Spot does not need it
    spot = ("partitions[0].spot=true", "partitions[0].nodes=1")
    assert _ask(standin, skus, usages, *spot) == []
    usages[3] = usage(SPOT, 50)
    (problem,) = _ask(standin, skus, usages, *spot)
    assert "partitions[0].sku: 96 vCPUs needed in eastus, the Spot vCPU quota " in problem
    assert "(lowPriorityCores) has 50 free" in problem


def test_an_update_needs_quota_only_for_what_it_adds(standin) -> None:
    skus, usages = roomy()
    usages[1] = usage(H100_FAMILY, 400, current=192)  # the deployed 2 nodes hold 192
    deployed = ("partitions[0].nodes=2",)
    assert _ask(standin, skus, usages, "partitions[0].nodes=4", before=deployed) == []
    usages[1] = usage(H100_FAMILY, 400, current=300)
    (problem,) = _ask(standin, skus, usages, "partitions[0].nodes=4", before=deployed)
    assert "192 vCPUs needed" in problem and "has 100 free" in problem


def test_no_answer_is_unavailable_not_a_crash() -> None:
    from azure.mgmt.compute import ComputeManagementClient

    client = ComputeManagementClient(StubCredential(), SUB, base_url="http://127.0.0.1:9",
                                     authentication_policy=standin_auth_policy(),
                                     retry_total=0)  # fmt: skip
    with pytest.raises(CapacityUnavailable, match="ServiceRequestError"):
        AzureCapacity(client).fetch("eastus")
