"""power.json and its power.d overrides; a backend module placed beside the program (as the
sandbox places its own on its scheduler), and the sandbox backend's wire format."""

from __future__ import annotations

import base64
import gzip
import importlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clusterctl.power.names import node_ref
from clusterctl.power.program import Config, make_backend
from clusterctl.render.power_files import POWER_SCHEDULER_MODULES, power_package
from clusterctl.sandbox.vm import substitutions


def _scheduler(tmp_path: Path, *, sandbox: bool):
    """/opt/gpucl/lib and /etc/gpu-clusters as the scheduler has them: the modules the user-data
    writes, plus (sandbox=True) what the sandbox places before boot. Returns (program, power.json).
    """
    root = tmp_path / "root"
    for name, text in power_package(POWER_SCHEDULER_MODULES).items():
        path = root / "opt/gpucl/lib/gpucl_power" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(gzip.decompress(base64.b64decode(text)).decode())
    if sandbox:
        for rel, text in substitutions.power_files("10.0.0.1").items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    cfg = root / "etc/gpu-clusters/power.json"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(json.dumps({"cluster": "h100", "pollSeconds": 15}))
    for mod in [m for m in sys.modules if m == "gpucl_power" or m.startswith("gpucl_power.")]:
        del sys.modules[mod]
    sys.path.insert(0, str(root / "opt/gpucl/lib"))
    try:
        return importlib.import_module("gpucl_power.program"), cfg
    finally:
        sys.path.remove(str(root / "opt/gpucl/lib"))


def test_the_product_ships_no_sandbox_backend() -> None:
    """Old code: sandbox_backend.py was in POWER_SCHEDULER_MODULES and clusterctl/power."""
    assert not any("sandbox" in m for m in POWER_SCHEDULER_MODULES)
    assert not list((Path(__file__).parents[2] / "clusterctl" / "power").glob("*sandbox*"))


def test_the_sandbox_backend_loads_as_the_scheduler_places_it(tmp_path) -> None:
    program, cfg = _scheduler(tmp_path, sandbox=True)
    loaded = program.Config.load(cfg)
    assert (loaded.backend, loaded.settings) == (
        "sandbox",
        {"url": f"http://{substitutions.MIRROR_HOST}{substitutions.POWER_PATH}"},
    )
    backend = program.make_backend(loaded)
    assert type(backend).__module__ == "gpucl_power.sandbox_backend"


def test_a_product_scheduler_refuses_the_sandbox_backend_by_name(tmp_path) -> None:
    program, cfg = _scheduler(tmp_path, sandbox=False)
    (cfg.parent / "power.d").mkdir()
    (cfg.parent / "power.d" / "90-x.json").write_text('{"backend": "sandbox"}')
    with pytest.raises(ValueError, match=r"unknown backend 'sandbox'.*sandbox_backend\.py"):
        program.make_backend(program.Config.load(cfg))
    (cfg.parent / "power.d" / "90-x.json").write_text('{"backend": "../x"}')
    with pytest.raises(ValueError, match="not a module name"):
        program.make_backend(program.Config.load(cfg))


def _sandbox_backend(tmp_path: Path, url: str):
    program, _ = _scheduler(tmp_path, sandbox=True)
    return program.make_backend(program.Config(cluster="h100", backend="sandbox",
                                               settings={"url": url}))  # fmt: skip


def test_power_d_overrides_apply_in_name_order(tmp_path) -> None:
    cfg = tmp_path / "power.json"
    cfg.write_text(json.dumps({"cluster": "h100", "pollSeconds": 15, "backend": "azure"}))
    (tmp_path / "power.d").mkdir()
    (tmp_path / "power.d" / "10-ops.json").write_text('{"pollSeconds": 5}')
    (tmp_path / "power.d" / "90-ops.json").write_text(
        '{"backend": "mine", "mine": {"url": "http://ops/power"}}'
    )
    (tmp_path / "power.d" / "README").write_text("not json, not read")
    loaded = Config.load(cfg)
    assert (loaded.cluster, loaded.poll_s, loaded.backend) == ("h100", 5.0, "mine")
    assert loaded.settings == {"url": "http://ops/power"}
    with pytest.raises(ValueError, match="unknown backend 'mine'"):
        make_backend(loaded)


def test_without_overrides_power_json_alone_decides(tmp_path) -> None:
    cfg = tmp_path / "power.json"
    cfg.write_text(json.dumps({"cluster": "h100", "pollSeconds": 15}))
    loaded = Config.load(cfg)
    assert (loaded.poll_s, loaded.backend) == (15.0, "azure")


def test_sandbox_backend_sends_vm_names_and_reads_errors(tmp_path) -> None:
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, body))
            if self.path.endswith("/state"):
                out = {v: {"power": "stopped", "error": "AllocationFailed: x"} for v in body["vms"]}
            elif self.path.endswith("/reimage"):
                self.send_response(403)
                self.end_headers()
                self.wfile.write(b'{"error": "no power role"}')
                return
            else:
                out = {v: None for v in body["vms"]}
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        backend = _sandbox_backend(
            tmp_path, f"http://127.0.0.1:{server.server_address[1]}/gpucl-sandbox/power"
        )
        refs = [node_ref("h100", "gpu-pg0-1"), node_ref("h100", "gpu-pg0-2")]
        assert backend.start(refs) == {"gpu-pg0-1": None, "gpu-pg0-2": None}
        st = backend.state(refs[:1])["gpu-pg0-1"]
        assert (st.power, st.error) == ("stopped", "AllocationFailed: x")
        assert "HTTP 403: no power role" in (backend.reimage(refs[0]) or "")
        assert seen[0] == (
            "/gpucl-sandbox/power/start",
            {"vms": ["h100-gpu-pg0_0", "h100-gpu-pg0_1"]},
        )
    finally:
        server.shutdown()


def test_sandbox_backend_lists_a_scale_sets_instance_ids(tmp_path) -> None:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert self.path == "/p/list", self.path
            data = json.dumps({body["vms"][0]: ["5", "0", "4"]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        backend = _sandbox_backend(tmp_path, f"http://127.0.0.1:{server.server_address[1]}/p")
        assert backend.list("h100-gpu-pg0") == ["0", "4", "5"]
    finally:
        server.shutdown()
