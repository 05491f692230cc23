"""MpiOperator: kubeflow/mpi-operator (MPIJob v2beta1) from its pinned release manifest.

The project publishes no Helm chart; the release's single manifest is the supported install. It
is applied from the copy in config/ whose sha256 clusterctl/render/vendored.py has checked, not
fetched from GitHub at `pulumi up`.
"""

from __future__ import annotations

from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s


class MpiOperator(pulumi.ComponentResource):
    def __init__(self, name: str, manifest: Path, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-clusters:k8s:MpiOperator", name, None, opts)
        self.manifest = k8s.yaml.v2.ConfigFile(
            f"{name}-manifest", file=str(manifest), opts=pulumi.ResourceOptions(parent=self)
        )
        self.register_outputs({"manifestFile": manifest.name})
