"""The declared substitutions: everything in which a sandbox node differs from the cloud VM.

The user-data is the cloud's byte for byte except `rewrite_user_data` (slurm.conf's node-size
line, the Microsoft apt source's URL and key, pinned commit ids of the github.com stand-ins);
every other stand-in lives in the image or the lab,
outside the user-data.
`explain()` is what `clusterctl sandbox up --explain` prints; `write(workdir)` leaves the same
list in the workdir.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from clusterctl.platform import scheduler_of
from clusterctl.spec.catalog import Catalog
from clusterctl.spec.model import ClusterSpec

MIRROR_HOST = "sandbox-mirror"
MS_URL = "https://packages.microsoft.com/repos/slurm-ubuntu-jammy/"
MS_STANDIN_URL = f"http://{MIRROR_HOST}/microsoft/repos/slurm-ubuntu-jammy/"


@dataclass(frozen=True)
class Substitution:
    name: str
    cloud: str
    sandbox: str
    why: str
    where: str
    """image | repo | lab | machine | user-data (the only one that edits the user-data)."""


SUBSTITUTIONS: tuple[Substitution, ...] = (
    Substitution(
        "os-image",
        "Azure HPC image microsoft-dsvm:ubuntu-hpc (Ubuntu 22.04)",
        "Debian trixie rootfs (systemd 257, cloud-init 25.x) built by mmdebstrap, with "
        "python3, curl, openssh, iproute2, rsync, git, make, gpg, xfsprogs, e2fsprogs, udev, "
        "logrotate preinstalled; "
        "systemd-resolved with LLMNR and mDNS off (resolved.conf.d), as Ubuntu builds it and as "
        "a VNet without multicast behaves, so no Slurm name resolves that Azure DNS would not; "
        "GPU nodes boot it under an overlay layer with what the HPC image adds that the scripts "
        "use (build-essential, jq, m4: azhpc-images install_utils.sh); the scheduler boots it "
        "bare, as its plain Ubuntu image (the GPU stand-ins below are in both); each node's disks "
        "live on an ext4 of the sandbox's own (a loop-mounted sparse file in the workdir)",
        "the HPC image cannot be booted in a container; trixie is the Debian release "
        "nearest the cloud's userland and Slurm",
        "image",
    ),
    Substitution(
        "apt-archive",
        "Ubuntu archive (archive.ubuntu.com / azure.archive.ubuntu.com)",
        "http://sandbox-mirror/debian: the trixie .debs the user-data's packages need, "
        "downloaded at image build, their contents recompressed from xz to zstd (as Ubuntu's "
        "archive ships them), signed with a local key, served by the lab server",
        "the lab has no route out; boot must not need the network",
        "image+repo",
    ),
    Substitution(
        "apt-microsoft-source",
        f"user-data apt source {MS_URL} with `key:` = Microsoft's published key "
        "(config/keys/microsoft.asc, fingerprint checked at render)",
        f"the same source line with URL {MS_STANDIN_URL} and `key:` = the local "
        "repository key instead of Microsoft's",
        "packages.microsoft.com cannot be reached, and the stand-in archive is signed by a "
        "local key",
        "user-data",
    ),
    Substitution(
        "pypi",
        "pip installs the power program's pinned packages (and their dependencies) from PyPI",
        "the same pins and resolver against http://sandbox-mirror/pypi/simple/: wheels for the "
        "node's Python downloaded once by the host; the image's /etc/pip.conf names that index "
        "(plain http, so a trusted host: the lab's own server)",
        "the lab has no route out",
        "image+repo",
    ),
    Substitution(
        "slurm-smd",
        "Microsoft's slurm-smd* 25.11.5 (SchedMD packaging)",
        "Debian's Slurm binaries repackaged as slurm-smd* version 25.11.5-1gpucl+deb<debian> "
        "(the user-data's \"25.11.5*\" pins match): sid's 26.05.5 by default, trixie's "
        "24.11.5 with `sandbox up --slurm 24.11` (or GPUCL_SANDBOX_SLURM=24.11); sackd and "
        "pam_slurm_adopt as slurm-smd-sackd and slurm-smd-libpam-slurm-adopt; no maintainer "
        "scripts, so no `slurm` user, no sysusers.d entry, no daemon started; upstream unit "
        "files; daemons under their plain names. With 26.05 the stand-in archive also carries "
        "the sid libraries that build links and trixie lacks (libhwloc15 2.15, libllhttp9.4); "
        "Microsoft's pmix 4.2.9-2 is a stand-in `pmix` 4.2.9-2gpucl that depends on Debian's "
        "libpmix2t64 (PMIx 5, the one Debian's Slurm is built against)",
        "no Slurm 25.11 for Debian: the releases on either side of it run instead (26.05 is "
        "the default, 24.11 the second run), so behaviour that changed between them shows; "
        "the version string is the declared lie, the behaviour that matters (users, units, "
        "autostart) is Microsoft's",
        "repo",
    ),
    Substitution(
        "munge",
        "Ubuntu's munge package",
        "Debian's real munge package (unchanged)",
        "its postinst makes a key and starts munged, as on the cloud",
        "repo",
    ),
    Substitution(
        "nfs",
        "kernel NFS client and server (nfs-common, nfs-kernel-server)",
        "stand-in packages: exportfs records exports in /var/lib/nfs/etab; mount.nfs asks the lab "
        "server, which (once the server node exports the path) clones the export's mount tree "
        "inside the server's mount namespace (open_tree) and attaches it at the mount point inside "
        "the client's (move_mount): the client sees the server's own view, data disk included; "
        "/proc/mounts shows the server's disk and type, so mount.nfs records SERVER:PATH and "
        "nfs4 in /run/gpucl-sandbox/nfs-mounts, which the NHC stand-in's mount checks read",
        "this kernel has no NFS; fstab and user-data stay byte-same",
        "repo+lab",
    ),
    Substitution(
        "imds",
        "Azure IMDS at 169.254.169.254",
        "the lab server answers /metadata/instance[/compute], /metadata/scheduledevents and "
        "/metadata/identity/oauth2/token at 169.254.169.254 (on the lab bridge), by the "
        "caller's source address; a token only for the scheduler's VM (the one with an "
        "identity), a placeholder nothing in the lab checks",
        "node-name.sh and other scripts must run unchanged",
        "lab",
    ),
    Substitution(
        "nat-egress",
        "the subnets' NAT gateway (one static public IP, defaultOutboundAccess false) is the "
        "nodes' only way to the Internet: packages.microsoft.com, the Ubuntu archive, "
        "github.com, PyPI, container registries",
        "no way out at all: the lab's bridge has no route beyond the lab server, which answers "
        "every download the user-data makes (apt-archive, pypi, github-downloads)",
        "the sandbox must not reach the Internet; a node that tried to fetch anything else "
        "fails here, where on Azure it would pass through the NAT",
        "lab",
    ),
    Substitution(
        "datasource",
        "cloud-init Azure datasource (customData, osProfile)",
        "NoCloud seed /var/lib/cloud/seed/nocloud/{user-data,meta-data,network-config}; "
        "meta-data instance-id/local-hostname as Azure names the VM; default user azureuser",
        "there is no Azure wireserver",
        "machine",
    ),
    Substitution(
        "admin-ssh-key",
        "the stack's public key for the admin user, from osProfile linuxConfiguration.ssh "
        "(not the user-data); passwordless sudo for a key-only admin",
        "a key made per sandbox (workdir/ssh/id_ed25519) in the NoCloud meta-data's public-keys; "
        "cloud-init's default user gets NOPASSWD sudo; the host reaches the scheduler's sshd "
        "through the lab namespace (ProxyCommand), as through a bastion",
        "the user's own private key is not the sandbox's to hold, and the host has no route into "
        "the lab",
        "machine",
    ),
    Substitution(
        "nccl-tests",
        "the HPC image's /opt/nccl-tests all_reduce_perf over NCCL, HPC-X and InfiniBand",
        "`validate --nccl --sandbox` runs clusterctl's stdlib TCP ring all-reduce probe "
        "(clusterctl/probe, copied to /sched/gpucl-sandbox) with one rank per node; it prints "
        "nccl-tests' table, so the parser, judge, sweep and drain are the cloud's",
        "no GPUs, NCCL or HPC-X here",
        "lab",
    ),
    Substitution(
        "infiniband-hcas",
        "a GPU VM's InfiniBand HCAs (ND sizes: mlx5_ib0..7, port 1 ACTIVE) under "
        "/sys/class/infiniband and nvidia_peermem loaded, which NCCL lists in its INFO lines "
        "(`NET/IB : Using [0]mlx5_ib0:1/IB ...`, channels `via NET/IB/N/GDRDMA`)",
        "a directory per HCA of the size (the catalog's fabric.nccl) at "
        "/run/gpucl-sandbox/hca/infiniband and a /run/gpucl-sandbox/hca/module/nvidia_peermem "
        "on each GPU node; the probe reads them where NCCL reads sysfs "
        "(CLUSTERCTL_PROBE_IB_DIR, CLUSTERCTL_PROBE_PEERMEM_DIR) and prints NCCL's lines for them, "
        "so `validate --nccl --sandbox` judges each host's fabric as the cloud's; faults drop-hca "
        "and no-gdr take one away; the ring's bytes still move over TCP",
        "this kernel has no InfiniBand devices, and a container's sysfs cannot hold made-up ones",
        "machine",
    ),
    Substitution(
        "pytorch-container",
        "`validate --train` runs torchrun and the training program in the NVIDIA PyTorch "
        "container (config/versions.yaml training.container) through pyxis/enroot: CUDA, NCCL "
        "over InfiniBand, one process per GPU",
        "the same batch script runs torchrun with the node's own python3 and Debian's "
        "python3-torch 2.6 (in the GPU nodes' HPC-image layer, from the stand-in apt archive), "
        "one CPU process per node, gloo over the lab bridge; Debian builds PyTorch without libuv, "
        "so the layer's torch/distributed/__init__.py makes TCPStore use its other backend "
        "(torchrun's rendezvous cannot ask for it); the `slow-gpu` fault caps a node's CPU",
        "no GPUs, CUDA or NCCL here, and the enroot stand-in runs no container (github-downloads)",
        "image+repo",
    ),
    Substitution(
        "azurehpc-health-checks",
        "the HPC image's /opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh (NHC with "
        "Azure's custom checks, in its container), which the deep tier runs",
        "a script at the same path on GPU nodes: it reads the same config lines, checks each "
        "check's arguments as Azure's checks read them, passes unless "
        "/run/gpucl-sandbox/fail-checks names the check (fault fail-deep), exits 1 on a failure",
        "no GPUs, InfiniBand or container runtime here",
        "image",
    ),
    Substitution(
        "dcgm",
        "the HPC image's DCGM (dcgmi and the nvidia-dcgm host engine), whose level-2 diagnostic "
        "the deep tier runs after Azure's checks",
        "a dcgmi on GPU nodes that answers only `diag -r LEVEL -j` with a JSON report (its own "
        "shape) whose tests pass unless /run/gpucl-sandbox/fail-checks names dcgm_diag (fault "
        "fail-dcgm)",
        "no GPUs here; DCGM's real diagnostic and its JSON layout are not exercised",
        "image",
    ),
    Substitution(
        "network",
        "Azure VNet, DHCP, Azure DNS",
        "one bridge in a lab netns, a veth per node with a fixed address (.4 scheduler, .5+ "
        "nodes, .1 gateway as in Azure), static network-config for eth0, /etc/hosts "
        "naming every node (no DNS server); no route out",
        "no DHCP server or DNS in the lab; only addresses inside our namespaces",
        "lab",
    ),
    Substitution(
        "gpus",
        "8 NVIDIA H100 + driver, nvidia-smi, nvidia-fabricmanager, nvidia-peermem",
        "/dev/nvidia0-7 (char 195:N) and /dev/nvidiactl bound in, a stand-in nvidia-smi "
        "script, a no-op nvidia-fabricmanager.service, modprobe.d `install ... /bin/true` "
        "for the NVIDIA modules; MIG: the stand-in keeps each GPU's mode and instances "
        "(`-mig`, `mig -cgi/-lgi/-dgi`, MIG lines under `-L`) as an H100 80GB does, and every "
        "/dev/nvidia-caps node an instance can have is made up front (char 60:N, no driver "
        "behind it: a job's device cgroup decides whether -L shows it); `-q` prints each GPU's "
        "Fabric section in nvidia-smi's layout: N/A as an HGX H100, or, with "
        "/etc/gpucl-sandbox/fabric ('<ClusterUUID> <CliqueId>'), that NVLink domain with the "
        "fabric Completed/Success as a GB200 node reports it",
        "no GPUs or NVIDIA modules here",
        "image+machine",
    ),
    Substitution(
        "dcgm-exporter",
        "Moby's docker (the HPC image's) running NVIDIA's dcgm-exporter container "
        "(versions.yaml monitoring.dcgmExporter) against the nvidia-dcgm host engine",
        "a docker stand-in in the HPC layer that runs only that image, and only as "
        "gpucl-dcgm-exporter.service asks: a Python exporter on :9400 serving, in "
        "dcgm-exporter's format and labels, exactly the fields of the counters file the unit "
        "passes with -f, one series per /dev/nvidiaN, with fixed idle readings (0 %, 35 C, no "
        "XID) and counters that grow with time",
        "no GPUs, DCGM or container runtime here: the unit, the counters file, the scrape, the "
        "names and labels are real, the numbers are not; no registry either, so where "
        "versions.yaml pins the image's digest (image@sha256:...) docker's own digest check "
        "is not exercised here",
        "image",
    ),
    Substitution(
        "infiniband-counters",
        "8 InfiniBand ports per ND node under /sys/class/infiniband, read by node_exporter's "
        "infiniband collector",
        "none: the InfiniBand dashboard panels and the InfinibandPortDown alert get no series",
        "this kernel has no InfiniBand devices, and a container's sysfs cannot hold made-up ones",
        "machine",
    ),
    Substitution(
        "data-disk",
        "scheduler data disk /dev/disk/azure/scsi1/lun0 (blank managed disk; cloud-init "
        "partitions it, makes xfs labelled gpucl-shared, mounts /shared)",
        "a 4 GiB loop device with ONE GPT partition made on the host (partx: this kernel parses no "
        "partition tables), /dev/disk/azure/scsi1/lun0[-part1] links by the image's platform unit; "
        "cloud-init's disk_setup refuses it (`is not a disk device`: lsblk TYPE is loop) and so is "
        "NOT exercised; fs_setup (mkfs.xfs -L gpucl-shared) and mounts (LABEL=) are",
        "no disk-typed block device with partitions can be made here: the kernel has no "
        "modules; lsblk types a loop device by its name (loop); zram is built in and typed disk "
        "but takes no partition table (checked: sfdisk writes one, the kernel reads none)",
        "machine",
    ),
    Substitution(
        "local-nvme",
        "8 local NVMe disks (model 'Microsoft NVMe Direct Disk'), md RAID0",
        "one loop device per GPU node (2 GiB sparse file, kept across reboots) that lsblk reports "
        "with model 'Microsoft NVMe Direct Disk' (udev-database record by the image's platform "
        "unit): nvme-raid.sh takes its one-disk branch (mkfs.xfs, mount); the RAID0 branch is "
        "not exercised",
        "this kernel has no md-raid; one disk exercises discovery, mkfs, mount and reboot",
        "machine",
    ),
    Substitution(
        "resource-disk",
        "on sizes with one (catalog resourceDiskGiB: ND A100 v4, NDm A100 v4), Azure's resource "
        "(temp) disk at /dev/disk/cloud/azure_resource, which cloud-init's Azure datasource names "
        "ephemeral0: cloud-init partitions it, makes ext4 and adds its default mount at /mnt "
        "(defaults,nofail,x-systemd.after=cloud-init-network.service,_netdev), which systemd "
        "mounts at every later boot; a deallocated VM gets a new disk that the datasource "
        "reformats",
        "a 1 GiB loop device with ONE GPT partition (made on the host, as for the data disk), "
        "/dev/disk/cloud/azure_resource[-part1] links by the image's platform unit; the node's "
        "datasource is NoCloud extended with the Azure datasource's ephemeral0 naming and "
        "built-in disk config (files/resource-disk, placed before boot): disk_setup refuses the "
        "loop device as for the data disk, fs_setup and mounts are cloud-init's own; a systemd "
        "generator writes the mount unit for fstab's _netdev device entries that "
        "systemd-fstab-generator skips in a container (ordered after the network and the "
        "entry's x-systemd.after=); the disk keeps its contents across a power cycle (no NTFS "
        "reformat), so every later boot mounts /mnt through systemd, as a VM's reboot does",
        "NoCloud names no ephemeral0 and this kernel has no SCSI disks; a scratch below /mnt was "
        "hidden by this mount on the cloud and nothing here showed it",
        "machine",
    ),
    Substitution(
        "fstab-local-disks",
        "systemd mounts fstab's local-disk entries (e.g. LABEL=gpucl-shared /shared) at boot",
        "the image's platform unit runs `mount -a -O no_netdev -t xfs,ext4,...` early at boot",
        "in a container systemd-fstab-generator ignores fstab device entries; without this a "
        "rebooted node would lose mounts a VM keeps (network and bind entries stay systemd's)",
        "image",
    ),
    Substitution(
        "node-size",
        "ND96 VMs: 96 vCPUs, 2 sockets, ~1.8 TB guest memory (slurm.conf's node lines)",
        "slurm.conf (in the user-data's write_files, and base64 in a resize's config-sync Run "
        "Command) gains `SlurmdParameters=config_overrides` after SlurmdSpoolDir=, so a small "
        "container may pose as the configured node",
        "a 2-core host cannot have what the node lines say; without it slurmctld marks every node "
        "INVAL (Low RealMemory, Low CPUs)",
        "user-data",
    ),
    Substitution(
        "github-downloads",
        "runcmd downloads from https://github.com: enroot's release .debs, `git clone` of "
        "NVIDIA/pyxis and mej/nhc (LBNL NHC) at their pinned tags",
        "the lab server answers https://github.com (every node's /etc/hosts maps github.com to "
        "it; its certificate is signed by a sandbox CA the image trusts) with stand-ins built "
        "locally: pyxis is its real release source (files/vendor, sha256-checked), compiled on "
        "the node against its Slurm headers; enroot .debs with the real packages' layout, "
        "conffiles, dependencies and setcap postinst but no container runtime, so a container "
        "job fails at pyxis's import (files/github/*/README.md); an NHC driver with NHC's "
        "option, config and failure semantics, real filesystem/process checks and hardware "
        "checks that pass unless a fault names them",
        "GitHub cannot be reached from the lab or from CI, and Debian packages none of the three",
        "lab",
    ),
    Substitution(
        "pinned-commits",
        "the user-data refuses a cloned tag unless it is the pinned commit (LBNL NHC 1.4.3 = "
        "d534d41d..., pyxis v0.24.0 = 10751994...), and a downloaded enroot .deb unless its "
        "sha256 is the pinned one (config/versions.yaml nodePackages.enroot.sha256, where one "
        "is recorded; gpucl-fetch.sh)",
        "each pinned commit id in the user-data is replaced by the stand-in repository's commit "
        "at the same tag, each recorded enroot sha256 by that of the stand-in .deb the lab "
        "serves under the same name, recorded when the stand-in was built (sha256.json)",
        "the stand-ins' history and bytes are not the upstream projects'; the checks themselves "
        "still run unchanged, so a file the lab serves changed after its build is refused as a "
        "changed release is on the cloud (pyxis's source is the real release, sha256-checked "
        "when the stand-in is built)",
        "user-data",
    ),
    Substitution(
        "power-api",
        "gpucl-power on the scheduler calls Azure Resource Manager with its managed identity "
        "(VMSS start, deallocate, reimage, redeploy, instance view: clusterctl/power/"
        "azure_backend.py)",
        "/etc/gpu-clusters/power.d/90-gpucl-sandbox.json (placed before boot, as the platform "
        "places the seed) selects a backend module the sandbox places beside gpucl-power's own "
        "(files/scheduler/; the product ships only Azure's): the same program, hostlists, "
        "Slurm updates and failure handling, with the five calls sent to the lab server, which "
        "stops and starts node containers (clusterctl/sandbox/vm/power.py: deallocate = guest "
        "poweroff, disks kept, local NVMe zeroed; start boots the same disks; reimage = a fresh "
        "OS disk; the start-fails fault answers AllocationFailed as the instance view does); "
        "only the scheduler's address may call it, as only its identity holds the power role",
        "ARM cannot be reached; the Azure calls themselves are tested against a local ARM "
        "stand-in checked against the REST spec (tests/power)",
        "machine+lab",
    ),
    Substitution(
        "time-scale",
        "SuspendTime = idleMinutes x 60 (default 900 s), SuspendTimeout 600 s, ResumeTimeout "
        "1800 s, gpucl-power polls every 15 s; gpucl-power-return.timer every 5 min gives back "
        "a node a failed power-up set DOWN 900 s before",
        "the power-saving tests rewrite these numbers to seconds in the scheduler's slurm.conf "
        "(scontrol reconfigure) and power.d (poll 1 s, return hold 60 s), the return timer to "
        "every 10 s (a drop-in), and Slurm's credential lifetime (AuthInfo cred_expire, default "
        "120 s, also the wait before a requeued job may start again) to 30 s; the hold stays "
        "longer than that wait, as 900 s is on Azure; boot keeps the rendered values",
        "a test cannot wait 15 minutes for a node to go idle; the rendered values are asserted "
        "by unit tests",
        "test",
    ),
    Substitution(
        "scheduled-events",
        "Azure Scheduled Events at IMDS /metadata/scheduledevents (Preempt with >= 30 s notice; "
        "the VM is evicted after the event is approved or NotBefore passes)",
        "the IMDS stand-in serves the events the `preempt` fault puts in its map; approving one "
        "(POST StartRequests) deallocates the VM through the power stand-in, as eviction with "
        "policy Deallocate does",
        "no Azure host raises events here",
        "lab",
    ),
    Substitution(
        "run-command",
        "`pulumi up` has Azure run the team's Run Command (render_team_sync) as root on the "
        "scheduler after it is made, and again when the stack's team changes",
        "`clusterctl users sync|add|remove --sandbox` runs the same script as root on the "
        "sandbox's scheduler (sudo over SSH as the admin); the sandbox test runs `users sync` "
        "right after boot, where `up` would",
        "the sandbox has no Pulumi engine and no Azure control plane",
        "lab",
    ),
    Substitution(
        "kernel",
        "the VM's own Ubuntu HPC kernel (modules: nvidia, md, nfs, ib)",
        "the host kernel, shared; no module loading; each node in its own time namespace whose "
        "boot clock (uptime) starts when its container starts, as a VM's does at boot",
        "containers share the host kernel",
        "machine",
    ),
    Substitution(
        "rlimits",
        "PID 1 (systemd, real root) raises a unit's limits as its Limit*= say: slurmd runs with "
        "LimitMEMLOCK=infinity, so jobs get unlimited locked memory",
        "the host's limits: locked memory at most 8 MiB (hard) for every process, slurmd too; a "
        "job gets slurmd's limit, not the submitting shell's (shown with a lower shell limit)",
        "this host gives no process CAP_SYS_RESOURCE, so no limit can be raised above it; "
        "unchanged",
        "machine",
    ),
)


SANDBOX_ARCH = "x86_64"
"""The node image is Debian amd64 (repo.ARCH) and systemd-nspawn runs it natively, no emulation."""


def cannot_boot(spec: ClusterSpec, cat: Catalog) -> str | None:
    """One line saying why the sandbox cannot boot this stack's nodes, or None."""
    if not scheduler_of(spec.scheduler).head_node:
        return f"it is a {spec.scheduler} cluster; the sandbox boots Slurm clusters"
    for i, part in enumerate(spec.partitions):
        sku = cat.get(part.sku, spec.cloud)
        if sku is not None and sku.node is not None and sku.node.cpu_arch != SANDBOX_ARCH:
            return (
                f"partitions[{i}] is {sku.name}, an {sku.node.cpu_arch} node; the sandbox boots "
                f"{SANDBOX_ARCH} containers natively (systemd-nspawn, no emulation), so it cannot "
                "boot it: plan it, and try its scripts on the cloud"
            )
    return None


def explain() -> str:
    lines = ["The sandbox differs from the cloud in exactly these ways:"]
    for s in SUBSTITUTIONS:
        lines += [
            f"- {s.name} [{s.where}]",
            f"    cloud:   {s.cloud}",
            f"    sandbox: {s.sandbox}",
            f"    why:     {s.why}",
        ]
    return "\n".join(lines)


POWER_OVERRIDE = "etc/gpu-clusters/power.d/90-gpucl-sandbox.json"
POWER_PATH = "/gpucl-sandbox/power"


SCHEDULER_FILES = Path(__file__).parent / "files" / "scheduler"
"""Files placed on the scheduler's disk before boot, at their path under this folder: the
sandbox's power backend module (the product ships none but Azure's)."""


def power_files(gateway: str) -> dict[str, str]:
    """The power-api substitution: the sandbox's backend module, placed beside gpucl-power's
    own, and a power.d override that names it, so gpucl-power talks to the lab server."""
    body = {"backend": "sandbox", "sandbox": {"url": f"http://{MIRROR_HOST}{POWER_PATH}"}}
    placed = {
        str(f.relative_to(SCHEDULER_FILES)): f.read_text()
        for f in sorted(SCHEDULER_FILES.rglob("*.py"))
    }
    return {**placed, POWER_OVERRIDE: json.dumps(body, indent=1) + "\n"}


def write(workdir: Path) -> Path:
    path = Path(workdir) / "substitutions.json"
    path.write_text(json.dumps([asdict(s) for s in SUBSTITUTIONS], indent=1) + "\n")
    return path


NODE_SIZE_LINE = "SlurmdParameters=config_overrides"


def pose_as_configured_node(user_data: str) -> str:
    """The node-size substitution: one line added to slurm.conf inside the user-data."""
    lines = user_data.split("\n")
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith("SlurmdSpoolDir="):
            indent = line[: len(line) - len(stripped)]
            lines.insert(i + 1, f"{indent}{NODE_SIZE_LINE}")
            return "\n".join(lines)
    return user_data


def rewrite_config_sync(script: str) -> str:
    """The node-size substitution in a resize's Run Command (render_config_sync), whose slurm.conf
    travels base64-encoded: decoded, the same line added, encoded again."""
    pattern = re.compile(r"(put \S+/slurm\.conf <<'B64'\n)(.*?)(\nB64\n)", re.S)

    def patch(m: re.Match[str]) -> str:
        conf = base64.b64decode("".join(m.group(2).split())).decode()
        blob = base64.b64encode(pose_as_configured_node(conf).encode()).decode()
        lines = "\n".join(blob[i : i + 76] for i in range(0, len(blob), 76))
        return m.group(1) + lines + m.group(3)

    out, n = pattern.subn(patch, script)
    if n != 1:
        raise ValueError("the config-sync script carries no slurm.conf to rewrite")
    return out


def rewrite_user_data(user_data: str, key_asc: str, commits: dict[str, str] | None = None) -> str:
    """The cloud's user-data with the Microsoft apt source pointed at the lab and pinned commits
    replaced by the stand-ins' (both declared above).

    Only a user-data that adds the Microsoft source is changed; a template change that moves or
    renames it raises instead of silently booting something else.
    """
    user_data = pose_as_configured_node(user_data)
    for real, standin in (commits or {}).items():
        user_data = user_data.replace(real, standin)
    if MS_URL not in user_data:
        return user_data
    out = user_data.replace(MS_URL, MS_STANDIN_URL)
    lines = out.split("\n")
    source = next(i for i, line in enumerate(lines) if MS_STANDIN_URL in line)
    for i in range(source + 1, len(lines)):
        stripped = lines[i].lstrip()
        if stripped == "key: |":
            indent = lines[i][: len(lines[i]) - len(stripped)]
            end = i + 1  # the literal block: blank lines and lines indented deeper than `key:`
            while end < len(lines) and (
                not lines[end].strip() or lines[end].startswith(indent + " ")
            ):
                end += 1
            while end > i + 1 and not lines[end - 1].strip():
                end -= 1  # a blank line after the block is not the key's
            block = [f"{indent}key: |"] + [
                f"{indent}  {k}" if k else "" for k in key_asc.strip().split("\n")
            ]
            lines[i:end] = block
            return "\n".join(lines)
    raise ValueError("user-data adds the Microsoft apt source but has no `key: |` block to replace")
