"""The shared Lustre file system of a Kubernetes cluster (kubernetes.sharedFilesystem): what each
service accepts, what the static PersistentVolume and its claim are called, and what it costs.
Pure data; components/aws/fsx_lustre.py builds it, clusterctl/render/kubernetes.py writes the
volume and claim, clusterctl/spec/rules_k8s.py refuses what the service would refuse.

FSx for Lustre PERSISTENT_2 (SSD), from the FSx API reference and Lustre guide (AWS docs, read
through the docs corpus 2026-11-27): StorageCapacity "1200 GiB, 2400 GiB, and increments of 2400
GiB" (UpdateFileSystem: "for ... PERSISTENT_2 SSD deployment types, valid values are in multiples
of 2400 GiB"); PerUnitStorageThroughput "for PERSISTENT_2 SSD-based deployment types, valid values
are 125, 250, 500, and 1000 MB/s/TiB"; the file system's security group must "allow inbound
traffic on ports 988 and 1018-1023" (cannot-create-fs.html), from itself and from the clients,
and the clients' group the same from the file system's.

Azure Managed Lustre (MicrosoftDocs azure-managed-lustre create-file-system-resource-manager.md,
ms.date 2024-08-16; Microsoft.StorageCache amlFilesystems, api-version 2024-03-01): SKUs
AMLFS-Durable-Premium-40/125/250/500 (MBps per TiB), minimum and increment 48/16/8/4 TiB, a
subnet of its own of at least /24. Not built yet: see clusterctl/clouds/azure.py `unsupported`.
"""

from __future__ import annotations

from clusterctl.platform import scheduler_of
from clusterctl.spec.model import ClusterSpec, SharedFilesystemSpec

FSX_DEPLOYMENT_TYPE = "PERSISTENT_2"
FSX_LUSTRE_VERSION = "2.15"
"""FileSystemTypeVersion: 2.15 is what PERSISTENT_2 offers with the EKS AL2023 Lustre client."""
FSX_FIRST_SIZES_GIB = (1200, 2400)
FSX_SIZE_STEP_GIB = 2400
FSX_THROUGHPUTS = (125, 250, 500, 1000)
LUSTRE_PORTS = ((988, 988), (1018, 1023))
"""TCP ports Lustre's LNet uses between clients and the file system's servers."""
FSX_CSI_ADDON = "aws-fsx-csi-driver"
FSX_CSI_DRIVER = "fsx.csi.aws.com"
CLAIM_NAME = "shared"
"""The PersistentVolumeClaim pods of the training namespace mount: `claimName: shared`."""
FSX_PRICE_KEY = "fsxLustrePersistent2Ssd{throughput}"
"""config/services.yaml aws key of one throughput tier's price (per GB-month)."""
HOURS_PER_MONTH = 730


def shared_filesystem(spec: ClusterSpec) -> SharedFilesystemSpec | None:
    """The stack's shared file system; None on Slurm stacks (their system is storage)."""
    on_kubernetes = not scheduler_of(spec.scheduler).head_node
    return spec.kubernetes.shared_filesystem if on_kubernetes else None


def volume_name(spec: ClusterSpec, stack: str) -> str:
    """The PersistentVolume (cluster-scoped, so named after the cluster and stack)."""
    return f"{spec.name}-{stack}-lustre"


def fsx_size_ok(size_gib: int) -> bool:
    return size_gib in FSX_FIRST_SIZES_GIB or size_gib % FSX_SIZE_STEP_GIB == 0


def fsx_sizes_near(size_gib: int) -> tuple[int, int]:
    """The accepted sizes just below and above `size_gib`."""
    if size_gib < FSX_SIZE_STEP_GIB:
        return FSX_FIRST_SIZES_GIB
    below = size_gib // FSX_SIZE_STEP_GIB * FSX_SIZE_STEP_GIB
    return below, below + FSX_SIZE_STEP_GIB
