"""power.json and its power.d overrides; the sandbox backend's wire format."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from clusterctl.power.names import node_ref
from clusterctl.power.program import Config, make_backend
from clusterctl.power.sandbox_backend import SandboxBackend


def test_power_d_overrides_apply_in_name_order(tmp_path) -> None:
    cfg = tmp_path / "power.json"
    cfg.write_text(json.dumps({"cluster": "h100", "pollSeconds": 15, "backend": "azure"}))
    (tmp_path / "power.d").mkdir()
    (tmp_path / "power.d" / "10-ops.json").write_text('{"pollSeconds": 5}')
    (tmp_path / "power.d" / "90-sandbox.json").write_text(
        '{"backend": "sandbox", "sandbox": {"url": "http://lab/gpucl-sandbox/power"}}'
    )
    (tmp_path / "power.d" / "README").write_text("not json, not read")
    loaded = Config.load(cfg)
    assert (loaded.cluster, loaded.poll_s, loaded.backend) == ("h100", 5.0, "sandbox")
    assert isinstance(make_backend(loaded), SandboxBackend)


def test_without_overrides_power_json_alone_decides(tmp_path) -> None:
    cfg = tmp_path / "power.json"
    cfg.write_text(json.dumps({"cluster": "h100", "pollSeconds": 15}))
    loaded = Config.load(cfg)
    assert (loaded.poll_s, loaded.backend) == (15.0, "azure")


def test_sandbox_backend_sends_vm_names_and_reads_errors() -> None:
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
        backend = SandboxBackend(f"http://127.0.0.1:{server.server_address[1]}/gpucl-sandbox/power")
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


def test_sandbox_backend_lists_a_scale_sets_instance_ids() -> None:
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
        backend = SandboxBackend(f"http://127.0.0.1:{server.server_address[1]}/p")
        assert backend.list("h100-gpu-pg0") == ["0", "4", "5"]
    finally:
        server.shutdown()
