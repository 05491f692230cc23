"""An API server that does not answer is said as such, not with kubectl's closing advice to turn
validation off (which cannot help: its schema download failed for the same reason)."""

from __future__ import annotations

import shutil

import pytest

from clusterctl.validate import CouldNotRun
from clusterctl.validate.k8s_launcher import KubectlClient

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
def test_apply_to_an_api_server_that_does_not_answer(tmp_path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    with pytest.raises(CouldNotRun) as err:
        KubectlClient(str(kubeconfig)).apply([{"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": "x"}}])  # fmt: skip
    text = str(err.value)
    assert "--validate=false" not in text
    assert "the Kubernetes API server did not answer kubectl apply" in text
    assert "127.0.0.1:9" in text and "ssh.allowedCidrs" in text
