"""A stub cloud, `gcp`, written the way a new module of clusterctl/clouds/ is: a `Cloud` subclass
for the methods and a `CLOUD` object for the answers. tests/unit/clouds/test_stub_cloud.py
registers it; nothing in the product names it."""

from __future__ import annotations

from dataclasses import dataclass

from clusterctl.clouds import ANY, Cloud, Feature
from clusterctl.clouds.base import CloudResource, SurvivorFinder


@dataclass
class GcpTagFinder:
    region: str

    @property
    def description(self) -> str:
        query = "labels.gpu-clusters-stack:<stack>"
        return f"gcloud asset search-all-resources --query {query} (in {self.region})"

    def tagged(self, stack: str) -> list[CloudResource]:
        return []


def _project(_: dict) -> dict:
    return {"projectId": "stub-project", "number": "123", "id": "stub-project"}


@dataclass(frozen=True)
class Gcp(Cloud):
    def tag_problem(self, key: str, value: str) -> str | None:
        # GCP labels: lowercase letters, digits, '_' and '-'
        ok = all(c.islower() or c.isdigit() or c in "_-" for c in key + value)
        return None if ok else "GCP labels use lowercase letters, digits, _ and - only"

    def image_form_ok(self, image: str) -> bool:
        return image.startswith("projects/")

    def survivor_finder(self, region: str) -> SurvivorFinder:
        return GcpTagFinder(region)


CLOUD = Gcp(
    name="gcp",
    title="GCP",
    listed=2,
    provider_namespaces=("gcp",),
    region_key="gcp:region",
    region_key_required=True,
    tag_key_max=63,
    tag_value_max=63,
    image_word="path",
    image_example="projects/P/global/images/I",
    default_head_sku="n2-standard-8",
    clusters={"kubernetes": ("stub_gke", "GkeGpuCluster")},
    mock_invokes={"gcp:organizations/getProject:getProject": _project},
    unsupported={
        (Feature.ZONES_AND_RESERVATIONS, ANY): "the stub places nodes itself",
        (Feature.SHARED_LUSTRE, "kubernetes"): "the stub builds no Lustre",
    },
    nat_egress=frozenset(),
    disk_backup=frozenset(),
    kubernetes_service="gke",
    quota_preflight=False,
    gpu_scale_sets=False,
    kubernetes_node_image="GKE COS node image",
    kubernetes_admin_principals=False,
    kubernetes_driver_in_image=True,
    kubernetes_default_storage_class=False,
    kubernetes_autoscaler_release=False,
    nccl_tests_image="us-docker.pkg.dev/stub/nccl-tests:1",
    nccl_tests_binary="/opt/nccl-tests/build/all_reduce_perf",
    mpirun="/usr/bin/mpirun",
    forward_env=("PATH", "LD_LIBRARY_PATH"),
)
