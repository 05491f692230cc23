"""The IMDS stand-in's managed-identity token endpoint answers as Azure's does: a token for the VM
that has an identity (the scheduler's), Azure's 400 "Identity not found" for any other VM, and
the metadata header and resource required. No root: served on 127.0.0.1 as if it were IMDS."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from clusterctl.sandbox.vm import labserver

TOKEN = "/metadata/identity/oauth2/token?api-version=2018-02-01"
ARM = "&resource=https%3A%2F%2Fmanagement.azure.com%2F"


@pytest.fixture
def imds(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(labserver, "IMDS_ADDR", "127.0.0.1")
    vm_map = tmp_path / "vms.json"

    class Handler(labserver.LabHandler):
        pass

    Handler.vm_map = vm_map
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def get(role: str, path: str, header: bool = True) -> tuple[int, dict]:
        compute = {"name": f"{role}-vm"}
        vm_map.write_text(json.dumps({"127.0.0.1": {"role": role, "compute": compute}}))
        req = urllib.request.Request(
            f"http://127.0.0.1:{server.server_address[1]}{path}",
            headers={"Metadata": "true"} if header else {},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.load(resp)
        except urllib.error.HTTPError as exc:
            return exc.code, json.load(exc)

    yield get
    server.shutdown()


def test_the_scheduler_gets_a_bearer_token_for_the_resource(imds) -> None:
    code, body = imds("scheduler", TOKEN + ARM)
    assert code == 200, body
    assert body["token_type"] == "Bearer" and body["resource"] == "https://management.azure.com/"
    assert body["access_token"] and int(body["expires_on"]) > int(body["not_before"])


def test_a_vm_without_an_identity_gets_azures_400(imds) -> None:
    assert imds("gpu", TOKEN + ARM) == (
        400, {"error": "invalid_request", "error_description": "Identity not found"})  # fmt: skip


def test_the_header_and_the_resource_are_required(imds) -> None:
    assert imds("scheduler", TOKEN + ARM, header=False)[0] == 400
    code, body = imds("scheduler", TOKEN)
    assert code == 400 and "resource" in body["error_description"]
