"""Azure: Slurm clusters of the toolkit's own (components/azure/slurm/) and AKS
(components/azure/aks/)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from clusterctl.clouds.base import (
    ANY,
    Cloud,
    CloudResource,
    Feature,
    SurvivorFinder,
    run_cli,
)
from clusterctl.constants import STACK_TAG

AZURE_IMAGE_URN = re.compile(r"^[^:\s/]+:[^:\s]+:[^:\s]+:[^:\s]+$")
GALLERY_IMAGE_ID = re.compile(
    r"^/subscriptions/(?P<subscription>[0-9a-fA-F-]{36})/resourceGroups/[^/\s]+/providers/"
    r"Microsoft\.Compute/galleries/(?P<gallery>[^/\s]+)/images/(?P<image>[^/\s]+)"
    r"(/versions/(?P<version>[^/\s]+))?$",
    re.IGNORECASE,
)
"""An image version in an Azure Compute Gallery (what Azure/azhpc-images' packer build writes:
.../galleries/<g>/images/<image>/versions/<YYYY.MMDD.hhmmss>); without /versions/ Azure takes the
gallery image's newest version when each VM is made."""

# "Use tags to organize your Azure resources": name 512, value 256, none of < > % & \ ? /,
# prefixes azure, microsoft, windows reserved.
TAG_BAD_CHARS = set("<>%&\\?/")
TAG_RESERVED = ("azure", "microsoft", "windows")

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
TENANT = "33333333-3333-3333-3333-333333333333"


@dataclass
class AzureTagFinder:
    """`az resource list --tag` (every ARM resource) plus `az group list --tag` (groups are not
    in the resource list). Works in the subscription `az` is logged in to."""

    subscription: str | None = None
    run: Callable[[list[str]], str] = run_cli

    @property
    def description(self) -> str:
        return (
            f"az resource list --tag {STACK_TAG}=<stack>; az group list --tag {STACK_TAG}=<stack>"
        )

    def tagged(self, stack: str) -> list[CloudResource]:
        sub = ["--subscription", self.subscription] if self.subscription else []
        found = []
        for what in (["resource", "list"], ["group", "list"]):
            text = self.run(["az", *what, "--tag", f"{STACK_TAG}={stack}", "-o", "json", *sub])
            for row in json.loads(text or "[]"):
                found.append(
                    CloudResource(
                        row["id"],
                        row.get("type", "Microsoft.Resources/resourceGroups"),
                        row["name"],
                    )
                )
        return found


def _client_config(_: dict) -> dict:
    return {
        "clientId": "44444444-4444-4444-4444-444444444444",
        "objectId": "55555555-5555-5555-5555-555555555555",
        "subscriptionId": SUBSCRIPTION,
        "tenantId": TENANT,
    }


def _aks_user_credentials(args: dict) -> dict:
    """AKS's exec-format user kubeconfig for an Entra ID cluster: kubelogin, no secret."""
    import base64

    name = args.get("resourceName", "aks")
    kubeconfig = (
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: {name}, cluster: {{server: 'https://{name}.hcp.mock.azmk8s.io:443', "
        "certificate-authority-data: bW9jaw==}}]\n"
        f"contexts: [{{name: {name}, context: {{cluster: {name}, user: clusterUser}}}}]\n"
        f"current-context: {name}\n"
        "users: [{name: clusterUser, user: {exec: {command: kubelogin, "
        "args: [get-token, --login, devicecode]}}}]\n"
    )
    return {
        "kubeconfigs": [
            {"name": "clusterUser", "value": base64.b64encode(kubeconfig.encode()).decode()}
        ]
    }


def _feature_registration(args: dict) -> dict:
    """Registered: the plan shows what `up` builds once the preflight passes (rules_k8s says so)."""
    name = f"{args.get('providerNamespace')}/{args.get('featureName')}"
    return {"name": name, "properties": {"state": "Registered"}}


@dataclass(frozen=True)
class Azure(Cloud):
    def tag_problem(self, key: str, value: str) -> str | None:
        bad = sorted(set(key) & TAG_BAD_CHARS)
        if bad:
            return f"Azure tag names may not contain {' '.join(bad)}"
        if key.lower().startswith(TAG_RESERVED):
            return f"Azure reserves tag names starting with {', '.join(TAG_RESERVED)}"
        return None

    def image_form_ok(self, image: str) -> bool:
        return bool(AZURE_IMAGE_URN.match(image) or GALLERY_IMAGE_ID.match(image))

    def survivor_finder(self, region: str) -> SurvivorFinder:
        return AzureTagFinder()


CLOUD = Azure(
    name="azure",
    title="Azure",
    listed=0,
    provider_namespaces=("azure-native",),
    region_key="azure-native:location",
    region_key_required=False,
    tag_key_max=512,
    tag_value_max=256,
    image_word="URN or gallery image version id",
    image_example=(
        "publisher:offer:sku:version, or /subscriptions/.../galleries/G/images/I/versions/V"
    ),
    default_head_sku="Standard_D8s_v5",
    clusters={
        "slurm": ("components.azure.slurm.slurm_cluster", "AzureSlurmCluster"),
        "kubernetes": ("components.azure.aks.aks_cluster", "AksGpuCluster"),
    },
    mock_invokes={
        "azure-native:authorization:getClientConfig": _client_config,
        "azure-native:features:getSubscriptionFeatureRegistration": _feature_registration,
        "azure-native:containerservice:listManagedClusterUserCredentials": _aks_user_credentials,
    },
    unsupported={
        (Feature.ZONES_AND_RESERVATIONS, ANY): (
            "they are AWS options; Azure scale sets for InfiniBand stay in one placement group"
        ),
        (Feature.ARM64_GPU_NODES, "kubernetes"): (
            "the AKS GPU node pool and its add-ons are set up for x86_64 nodes only"
        ),
        (Feature.SHARED_LUSTRE, "kubernetes"): (
            "the AKS cluster runs in the VNet AKS makes itself (Azure CNI overlay), and Azure "
            "Managed Lustre needs a subnet of its own (at least /24) in a VNet the nodes reach, "
            "which the stack does not build yet; remove kubernetes.sharedFilesystem (FSx for "
            "Lustre on EKS works)"
        ),
    },
    # components/azure/slurm/network.py; components/azure/slurm/disk_backup.py
    nat_egress=frozenset({"slurm"}),
    disk_backup=frozenset({"slurm"}),
    kubernetes_service="aks",
    quota_preflight=True,
    gpu_scale_sets=True,
    kubernetes_node_image="AKS Ubuntu node image",
    kubernetes_admin_principals=False,
    kubernetes_driver_in_image=False,
    kubernetes_default_storage_class=False,
    kubernetes_autoscaler_release=False,
    kubernetes_mig_pools=True,
    # Azure/aks-rdma-infiniband tests/containers/nccl-tests: the image, where it keeps
    # all_reduce_perf, and its Dockerfile installs Ubuntu's openmpi-bin
    nccl_tests_image="ghcr.io/azure/aks-rdma-infiniband/nccl-tests:latest",
    nccl_tests_binary="/opt/nccl_tests/build/all_reduce_perf",
    mpirun="/usr/bin/mpirun",
    forward_env=("PATH", "LD_LIBRARY_PATH"),
    # AKS's load balancer and outbound IP bill whatever the tier; the Standard tier's control
    # plane bills too (kubernetes.aksTier, its own line)
    kubernetes_services=("aksLoadBalancer", "aksOutboundIp"),
    kubernetes_tier_service="aksStandardTier",
    # AKS taints every node of a Spot pool (MicrosoftDocs azure-aks-docs
    # articles/aks/spot-node-pool.md): a pod without the toleration never lands.
    kubernetes_spot_taint=("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule"),
)
