"""The lab's HTTP server, run by the host in the lab network namespace (stdlib only, run by path).

- 169.254.169.254: the Azure IMDS stand-in. The caller's source address picks its VM from the
  JSON map file (address -> compute document); Azure's `Metadata: true` header is required.
- any other address (the bridge's, named `sandbox-mirror` in every node's /etc/hosts): the stand-in
  apt repositories, as static files under --root.

Every request is logged (client, path, status) to stderr, which the host sends to a file.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

IMDS_ADDR = "169.254.169.254"


class LabHandler(SimpleHTTPRequestHandler):
    server_version = "gpucl-sandbox-lab/1"
    vm_map: Path  # set by main()

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(
            f"{self.client_address[0]} -> {self.connection.getsockname()[0]} {format % args}\n"
        )
        sys.stderr.flush()

    def do_GET(self) -> None:
        if self.connection.getsockname()[0] == IMDS_ADDR:
            self._imds()
        else:
            super().do_GET()

    def _imds(self) -> None:
        url = urlsplit(self.path)
        if self.headers.get("Metadata", "").lower() != "true":
            return self._json(400, {"error": "Bad request. Required metadata header not specified"})
        if "api-version" not in url.query:
            return self._json(400, {"error": "Bad request. api-version was not specified"})
        try:
            vms = json.loads(self.vm_map.read_text())
        except (OSError, ValueError):
            vms = {}
        vm = vms.get(self.client_address[0])
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
        return self._json(404, {"error": "Not found"})

    def _json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, help="directory served as the apt mirror")
    ap.add_argument("--vm-map", required=True, help="JSON: source address -> IMDS documents")
    ap.add_argument("--port", type=int, default=80)
    args = ap.parse_args(argv)
    LabHandler.vm_map = Path(args.vm_map)
    root = args.root

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
