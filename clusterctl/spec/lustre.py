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

Azure Managed Lustre (storage.lustre on Azure Slurm; components/azure/slurm/managed_lustre.py):
SKUs AMLFS-Durable-Premium-40/125/250/500 (MBps per TiB), storage minimum and increment 48/16/8/4
TiB (MicrosoftDocs azure-managed-lustre create-file-system-resource-manager.md, ms.date
2024-08-16; Microsoft.StorageCache amlFilesystems api-version 2024-03-01, which
pulumi-azure-native 3's storagecache.AmlFilesystem sends). The subnet is the file system's own,
sized by capacity: "4 TiB to 16 TiB /27 or larger, 20 TiB to 40 TiB /26, 44 TiB to 92 TiB /25,
96 TiB to 196 TiB /24, 200 TiB to 400 TiB /23" (learn.microsoft.com azure-managed-lustre
amlfs-prerequisites, "Network size requirements"); its NSG admits Lustre's TCP 988 and 1019-1023
from and to the VNet (the same page, "Network security group"). The Lustre file system is always
named `lustrefs`; clients mount `MGS_IP@tcp:/lustrefs` with `noatime,flock` (Microsoft's
client-install pages). The client package is `amlfs-lustre-client-<version>=<kernel>` from
packages.microsoft.com/repos/amlfs-<codename>, which the Azure HPC image installs when it is
built (Azure/azhpc-images components/install_lustre_client.sh; versions.json lustre).
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
AMLFS_PORTS = ("988", "1019-1023")
"""The TCP ports Azure Managed Lustre's subnet must allow within the VNet."""
AMLFS_STEP_TIB = {40: 48, 125: 16, 250: 8, 500: 4}
"""Per SKU (MB/s per TiB): the smallest size and the increment, in TiB."""
AMLFS_SUBNET_PREFIX = ((16, 27), (40, 26), (92, 25), (196, 24), (400, 23))
"""Microsoft's table: up to N TiB, a /P subnet or larger."""
AMLFS_FS_NAME = "lustrefs"
AMLFS_MOUNT_OPTIONS = "noatime,flock,_netdev,nofail"
AMLFS_MGS_PLACEHOLDER = "10.255.255.254"
"""What `plan` shows for the MGS address (Azure hands it out when the file system is made)."""
AMLFS_PRICE_KEY = "managedLustreDurablePremium{throughput}"
"""config/services.yaml azure key of one SKU's price (per GB-month)."""
GIB_PER_TIB = 1024
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


def amlfs_sku(throughput: int) -> str:
    return f"AMLFS-Durable-Premium-{throughput}"


def amlfs_subnet_prefix(size_tib: int) -> int | None:
    """The largest prefix length (smallest subnet) Microsoft's table gives for the size; None
    above the table's last row."""
    return next((p for most, p in AMLFS_SUBNET_PREFIX if size_tib <= most), None)
