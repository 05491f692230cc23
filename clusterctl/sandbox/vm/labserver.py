"""The lab's HTTP server, run by the host in the lab network namespace (stdlib only, run by path).

- 169.254.169.254: the Azure IMDS stand-in. The caller's source address picks its VM from the
  JSON map file (address -> compute document); Azure's `Metadata: true` header is required.
- any other address (the bridge's, named `sandbox-mirror` in every node's /etc/hosts): the stand-in
  apt repositories, as static files under --root; and /gpucl-sandbox/nfs-mount, the NFS stand-in's
  server side (the nodes' mount.nfs asks for an export; nfsbind.py attaches it); and POST
  /gpucl-sandbox/power/<action>, the stand-in for the ARM calls of the scheduler's gpucl-power
  (power.py does them on the host; only the scheduler's address may call).
- GET 169.254.169.254/metadata/identity/oauth2/token: the managed identity's token, for the VM
  that has one (the scheduler's, which holds the power role) as Azure shapes it; any other VM gets
  Azure's 400 "Identity not found". The token is a placeholder: nothing in the lab checks it.
- POST 169.254.169.254/metadata/scheduledevents: approving an event (StartRequests) lets it
  happen at once: a Preempt deallocates the VM (the scale set's eviction policy).

- https on port 443 (github.com in every node's /etc/hosts): the github.com stand-in (github.py):
  release files as static files, and git's smart HTTP protocol through `git http-backend`.

Every request is logged (client, path, status) to stderr, which the host sends to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

IMDS_ADDR = "169.254.169.254"


POWER_PATH = "/gpucl-sandbox/power/"
VM_MAP_LOCK = threading.Lock()


class LabHandler(SimpleHTTPRequestHandler):
    server_version = "gpucl-sandbox-lab/1"
    vm_map: Path  # set by main()
    workdir: Path | None = None  # set by main(); the power stand-in needs it

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(
            f"{self.client_address[0]} -> {self.connection.getsockname()[0]} {format % args}\n"
        )
        sys.stderr.flush()

    def do_GET(self) -> None:
        if self.connection.getsockname()[0] == IMDS_ADDR:
            self._imds()
        elif self.path.startswith("/gpucl-sandbox/nfs-mount?"):
            self._nfs_mount()
        else:
            super().do_GET()

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        if self.connection.getsockname()[0] == IMDS_ADDR:
            if url.path.rstrip("/") == "/metadata/scheduledevents":
                return self._approve()
            return self._json(404, {"error": "Not found"})
        if url.path.startswith(POWER_PATH):
            return self._power(url.path[len(POWER_PATH) :])
        return self._json(404, {"error": "Not found"})

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = None
        return body if isinstance(body, dict) else {}

    def _power(self, action: str) -> None:
        vm = self._vms().get(self.client_address[0], {})
        if vm.get("role") != "scheduler":
            return self._json(403, {"error": f"{self.client_address[0]} holds no power role"})
        vms = [v for v in self._body().get("vms", []) if isinstance(v, str)]
        code, out = self._power_call(action, vms)
        return self._json(code, out)

    def _power_call(self, action: str, vms: list[str]) -> tuple[int, dict]:
        if self.workdir is None:
            return 503, {"error": "this lab server has no sandbox workdir"}
        argv = [sys.executable, "-m", "clusterctl.sandbox.vm.power", action, *vms]
        argv += ["--workdir", str(self.workdir)]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        sys.stderr.write(proc.stderr)
        try:
            out = json.loads(proc.stdout)
        except ValueError:
            return 500, {"error": proc.stderr.strip()[-500:] or "no answer"}
        return (200 if proc.returncode == 0 else 500), out

    def _approve(self) -> None:
        if self.headers.get("Metadata", "").lower() != "true":
            return self._json(400, {"error": "Bad request. Required metadata header not specified"})
        addr = self.client_address[0]
        wanted = {
            r.get("EventId") for r in self._body().get("StartRequests", []) if isinstance(r, dict)
        }
        with VM_MAP_LOCK:
            vms = self._vms()
            vm = vms.get(addr)
            if vm is None:
                return self._json(404, {"error": f"no VM at {addr} in this lab"})
            doc = vm.get("scheduledevents", {"DocumentIncarnation": 0, "Events": []})
            approved = [e for e in doc.get("Events", []) if e.get("EventId") in wanted]
            doc["Events"] = [e for e in doc.get("Events", []) if e not in approved]
            doc["DocumentIncarnation"] = doc.get("DocumentIncarnation", 0) + 1
            vm["scheduledevents"] = doc
            tmp = self.vm_map.with_name(self.vm_map.name + ".tmp")
            tmp.write_text(json.dumps(vms, indent=1))
            os.replace(tmp, self.vm_map)
        self._json(200, {})
        # the approved event happens now: an eviction deallocates the VM
        evicted = [e for e in approved if e.get("EventType") in ("Preempt", "Terminate")]
        if evicted:
            self._power_call("deallocate", [vm["compute"]["name"]])

    def _vms(self) -> dict:
        try:
            return json.loads(self.vm_map.read_text())
        except (OSError, ValueError):
            return {}

    def _nfs_mount(self) -> None:
        """Attach <server>:<path> at <target> in the caller, once the server exports <path>."""
        q = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
        vms = self._vms()
        client = vms.get(self.client_address[0], {})
        server = next((v for v in vms.values() if q.get("server") in v.get("hostnames", [])), None)
        if not client.get("init") or server is None or not server.get("init"):
            return self._json(404, {"error": f"no such client or server: {q}"})
        root = f"/proc/{server['init']}/root"
        path, target = q.get("path", ""), q.get("target", "")
        try:
            etab = Path(f"{root}/var/lib/nfs/etab").read_text().splitlines()
        except OSError:
            etab = []
        if not any(line.split("\t")[0] == path for line in etab):
            return self._json(503, {"error": f"{q.get('server')} does not export {path}"})
        helper = Path(__file__).with_name("nfsbind.py")
        argv = [
            sys.executable,
            "-I",
            str(helper),
            str(server["init"]),
            path,
            str(client["init"]),
            target,
        ]
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            return self._json(500, {"error": proc.stderr.strip()})
        return self._json(200, {"mounted": f"{q.get('server')}:{path} on {target}"})

    def _imds(self) -> None:
        url = urlsplit(self.path)
        if self.headers.get("Metadata", "").lower() != "true":
            return self._json(400, {"error": "Bad request. Required metadata header not specified"})
        if "api-version" not in url.query:
            return self._json(400, {"error": "Bad request. api-version was not specified"})
        vm = self._vms().get(self.client_address[0])
        if vm is None:
            return self._json(404, {"error": f"no VM at {self.client_address[0]} in this lab"})
        path = url.path.rstrip("/")
        if path == "/metadata/instance/compute":
            return self._json(200, vm["compute"])
        if path == "/metadata/instance":
            return self._json(200, {"compute": vm["compute"], "network": vm.get("network", {})})
        if path == "/metadata/scheduledevents":
            return self._json(
                200, vm.get("scheduledevents", {"DocumentIncarnation": 0, "Events": []})
            )
        if path == "/metadata/identity/oauth2/token":
            return self._token(vm, parse_qs(url.query))
        return self._json(404, {"error": "Not found"})

    def _token(self, vm: dict, q: dict[str, list[str]]) -> None:
        """Azure IMDS's managed-identity token endpoint (REST shape of the access token
        response); only the scheduler's VM has an identity (SchedulerIdentity)."""
        if not q.get("resource"):
            return self._json(400, {"error": "invalid_request",
                                    "error_description": "Required query variable 'resource' "
                                                         "is missing"})  # fmt: skip
        if vm.get("role") != "scheduler":
            return self._json(400, {"error": "invalid_request",
                                    "error_description": "Identity not found"})  # fmt: skip
        now = int(time.time())
        return self._json(200, {
            "access_token": f"gpucl-sandbox-token.{vm['compute']['name']}.{now}",
            "client_id": vm.get("identity_client_id", "00000000-0000-4000-8000-000000000001"),
            "expires_in": "86399", "expires_on": str(now + 86399),
            "ext_expires_in": "86399", "not_before": str(now),
            "resource": q["resource"][0], "token_type": "Bearer",
        })  # fmt: skip

    def _json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class GithubHandler(SimpleHTTPRequestHandler):
    """github.com: release downloads (static) and `git clone` over smart HTTP (git http-backend)."""

    server_version = "gpucl-sandbox-github/1"
    git_root: Path  # set by main()

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"{self.client_address[0]} -> https {format % args}\n")
        sys.stderr.flush()

    def do_GET(self) -> None:
        if ".git/" in self.path:
            self._git("GET")
        else:
            super().do_GET()

    def do_POST(self) -> None:
        if ".git/" in self.path:
            self._git("POST")
        else:
            self.send_error(405)

    def _git(self, method: str) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if method == "POST" else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.git_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": method,
            "PATH_INFO": url.path,
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        proc = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=120
        )
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = proc.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        if proc.returncode != 0 and not head:
            status, payload = 500, proc.stderr
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _serve_github(root: Path, port: int) -> ThreadingHTTPServer:
    GithubHandler.git_root = root / "git"
    static = str(root / "root")

    class Handler(GithubHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=static, **kw)

    server = ThreadingHTTPServer(("0.0.0.0", port), Handler)
    server.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(root / "tls" / "server.crt", root / "tls" / "server.key")
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, help="directory served as the apt mirror")
    ap.add_argument("--vm-map", required=True, help="JSON: source address -> IMDS documents")
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--github", help="the github.com stand-in (github.py), served on --tls-port")
    ap.add_argument("--tls-port", type=int, default=443)
    ap.add_argument("--workdir", help="the sandbox's workdir (the power stand-in acts on it)")
    args = ap.parse_args(argv)
    LabHandler.vm_map = Path(args.vm_map)
    LabHandler.workdir = Path(args.workdir) if args.workdir else None
    root = args.root
    if args.github:
        _serve_github(Path(args.github), args.tls_port)

    class Handler(LabHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=root, **kw)

    server = ThreadingHTTPServer(("0.0.0.0", args.port), Handler)
    server.daemon_threads = True
    print(f"lab server on port {args.port}, root {root}", file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
