"""A Kubernetes API server stand-in for Prometheus' kubernetes_sd (role endpointslice), run
inside a sandbox node by tests/e2e/vm/test_vm_boot.py: it answers list and watch for
EndpointSlices, Services and Pods with the objects of a JSON file, the way the API server
answers client-go's informers (a list with a resourceVersion, then a watch that stays open and
sends nothing). It also stands in for kube-state-metrics: /metrics serves the series of the
JSON file's `ksmMetrics`. Standard library only (the node's python3).

Usage: python3 fake_kube_api.py PORT OBJECTS.json REQUEST_LOG
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PORT, OBJECTS, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(OBJECTS) as f:
    DOC = json.load(f)

LISTS = {
    "/apis/discovery.k8s.io/v1/endpointslices": (
        "EndpointSliceList",
        "discovery.k8s.io/v1",
        "endpointslices",
    ),
    "/api/v1/services": ("ServiceList", "v1", "services"),
    "/api/v1/pods": ("PodList", "v1", "pods"),
    "/api/v1/nodes": ("NodeList", "v1", "nodes"),
}
VERSION = {"major": "1", "minor": "35", "gitVersion": "v1.35.0", "platform": "linux/amd64"}


def _namespaced(path):
    """/api/v1/namespaces/NS/pods -> (/api/v1/pods, NS)."""
    parts = path.strip("/").split("/")
    if "namespaces" in parts and len(parts) >= parts.index("namespaces") + 3:
        i = parts.index("namespaces")
        ns = parts[i + 1]
        return "/" + "/".join(parts[:i] + parts[i + 2 :]), ns
    return path, None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        with open(LOG, "a") as f:
            f.write(self.requestline + "\n")

    def _json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/version":
            return self._json(200, VERSION)
        if url.path == "/metrics":  # kube-state-metrics' series, for the ksm endpoint
            data = DOC.get("ksmMetrics", "").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        path, ns = _namespaced(url.path)
        if path not in LISTS:
            return self._json(
                404,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "reason": "NotFound",
                    "code": 404,
                },
            )
        kind, api_version, key = LISTS[path]
        if query.get("watch") == ["true"]:
            # Nothing changes: keep the watch open until the client's timeout, then end it.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.flush()
            time.sleep(min(float(query.get("timeoutSeconds", ["60"])[0]), 60.0))
            return None
        items = [o for o in DOC.get(key, []) if ns is None or o["metadata"]["namespace"] == ns]
        return self._json(
            200,
            {
                "kind": kind,
                "apiVersion": api_version,
                "metadata": {"resourceVersion": "1"},
                "items": items,
            },
        )


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
