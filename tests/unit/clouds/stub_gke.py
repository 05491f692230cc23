"""The stub cloud's component: what clusterctl/clouds/ names for `gcp` + `kubernetes`. It makes
one resource of the GCP provider's type (the mock engine records it) and asks one invoke of the
stub's own mock_invokes."""

from __future__ import annotations

import pulumi

from clusterctl.spec.model import ClusterSpec


class GkeGpuCluster(pulumi.ComponentResource):
    def __init__(self, name: str, spec: ClusterSpec, stack: str) -> None:
        super().__init__("gpu-clusters:gcp:GkeGpuCluster", name)
        project = pulumi.runtime.invoke("gcp:organizations/getProject:getProject", {}).value
        self.cluster = pulumi.CustomResource(
            "gcp:container/cluster:Cluster",
            name,
            {
                "location": spec.region,
                "project": project["projectId"],
                "resourceLabels": {"gpu-clusters-stack": stack},
            },
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.outputs: dict = {}
        self.register_outputs({})
