"""One node: an overlay root over the image, a NoCloud seed, GPU device nodes, systemd-nspawn.

The container boots the image's systemd as PID 1 in its own network namespace and in its own subtree
of every cgroup hierarchy (the host is hybrid v1; Slurm's cgroup/v2 plugin refuses hybrid).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from clusterctl.render.cloud_init import gzip_user_data
from clusterctl.spec.mig import GIS_PER_GPU, cap_minor

from ..cgroups import cpu_shares, make_dir, v1_hierarchies
from .vmstate import VmState

CGROUP_ROOT = Path("/sys/fs/cgroup")
NVIDIA_MAJOR = 195
CAPS_MAJOR = 60
"""The stand-in /dev/nvidia-caps nodes' major: 60 is reserved for local use (the kernel's
devices.txt), never a driver's, so opening one that the job's device cgroup allows gives ENXIO
and one it denies EPERM, which is what the stand-in nvidia-smi tells apart."""


@dataclass
class MachineSpec:
    name: str
    """The VM's hostname as Azure sets it (computerName), e.g. h100-scheduler, gpu-pg0-000000."""
    role: str
    user_data: str
    address: str
    netns: str
    hosts: dict[str, str] = field(default_factory=dict)
    """/etc/hosts: name -> address (the lab's stand-in for Azure DNS)."""
    gpus: int = 0
    admin_user: str = "azureuser"
    ssh_keys: tuple[str, ...] = ()
    """Public keys for the admin user, as Azure's osProfile linuxConfiguration.ssh gives them."""
    extra_files: dict[str, str] = field(default_factory=dict)
    """More files the sandbox puts on the node before it boots (path -> text; substitutions.py)."""
    nvme_disks: int = 0
    """Loop devices that lsblk reports with Azure's local NVMe model (no md-raid here: use 1)."""
    nvme_size_mib: int = 2048
    data_disks: tuple[tuple[str, int], ...] = ()
    """(device link, size MiB): a loop device with one GPT partition, e.g. Azure's
    /dev/disk/azure/scsi1/lun0 (the link and <link>-part1 are made by the image's platform unit)."""
    hcas: tuple[str, ...] = ()
    """Stand-in InfiniBand HCAs (substitution infiniband-hcas), e.g. mlx5_ib0..7: a directory
    per device with port 1 ACTIVE at HCA_DIR, and nvidia_peermem loaded at PEERMEM_DIR; the probe
    reads them where NCCL reads sysfs."""
    hca_rate: str = ""
    """What each port's `rate` says, as sysfs does: `400 Gb/sec (4X NDR)`."""
    resource_disk_mib: int = 0
    """Azure's resource (temp) disk on sizes that have one (substitution resource-disk): a loop
    device with one GPT partition at /dev/disk/cloud/azure_resource, which a NoCloud datasource that
    names ephemeral0 as Azure's does lets cloud-init itself format and mount at /mnt; 0: none."""


def node_dir(state: VmState, name: str) -> Path:
    return Path(state.workdir) / "nodes" / name


DISKS_IMAGE = "disks.img"
DISKS_SIZE_GIB = 256
"""Apparent size of the sparse file; only what the nodes write takes host disk."""


def mount_disks(state: VmState) -> Path:
    """The nodes' disks (OS-disk upper layers, NVMe and data-disk images) on an ext4 of the
    sandbox's own, a sparse file loop-mounted at <workdir>/nodes: the host's root here is ext4
    without a journal, where each new inode is checked against recently deleted ones
    (ext4's recently_deleted), so a boot right after another sandbox's `down` spent a fifth of
    its CPU time in the host kernel; and `down` drops one file instead of ~200k. The nodes see
    the same overlay roots as before."""
    nodes = Path(state.workdir) / "nodes"
    if any(r.kind == "mount" and r.name == str(nodes) for r in state.resources):
        return nodes
    image = Path(state.workdir) / DISKS_IMAGE
    state.record("dir", str(image))
    state.record("dir", str(nodes))
    with open(image, "wb") as f:
        f.truncate(DISKS_SIZE_GIB << 30)
    # lazy inode tables over a sparse file read as zeros: nothing to initialise (noinit_itable)
    _run(["mkfs.ext4", "-q", "-F", "-i", "65536", "-E", "lazy_itable_init=1,lazy_journal_init=1",
          "-L", "gpucl-disks", str(image)])  # fmt: skip
    nodes.mkdir(exist_ok=True)
    state.record("loop", str(image))
    state.record("mount", str(nodes))
    _run(["mount", "-o", "loop,noinit_itable,noatime", str(image), str(nodes)])
    return nodes


def mount_root(state: VmState, spec: MachineSpec, lower: str) -> Path:
    """Overlay: the cached image (read-only lowers, "top:...:bottom") + this node's upper."""
    d = node_dir(state, spec.name)
    state.record("dir", str(d))
    for sub in ("upper", "work", "root"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    root = d / "root"
    state.record("mount", str(root))
    opts = f"lowerdir={lower},upperdir={d / 'upper'},workdir={d / 'work'}"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(root)], check=True)
    return root


def remount_fresh(state: VmState, name: str) -> None:
    """A new OS disk from the image (Azure's reimage): the node's upper layer emptied, its
    overlay mounted again, the platform's seed written. The node must be stopped."""
    d = node_dir(state, name)
    node = state.nodes[name]
    subprocess.run(["umount", str(d / "root")], check=True)
    for sub in ("upper", "work"):
        shutil.rmtree(d / sub)
        (d / sub).mkdir()
    opts = f"lowerdir={node['lower']},upperdir={d / 'upper'},workdir={d / 'work'}"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(d / "root")], check=True)
    write_seed(d / "root", node["seed"])


SLURMD_MASK = "etc/systemd/system/slurmd.service"


def mask_slurmd(state: VmState, name: str) -> None:
    """slurmd masked on the node's OS disk (the boot-hangs fault): the node must be stopped."""
    mask = node_dir(state, name) / "root" / SLURMD_MASK
    mask.parent.mkdir(parents=True, exist_ok=True)
    mask.unlink(missing_ok=True)
    mask.symlink_to("/dev/null")


def unmask_slurmd(state: VmState, name: str) -> None:
    mask = node_dir(state, name) / "root" / SLURMD_MASK
    if mask.is_symlink() and os.readlink(mask) == "/dev/null":
        mask.unlink()


def seed_files(spec: MachineSpec, gateway: str) -> dict[str, str]:
    """The NoCloud seed and the per-node files the cloud's platform provides (path -> text)."""
    meta = f"instance-id: {spec.name}\nlocal-hostname: {spec.name}\n"
    if spec.ssh_keys:
        meta += "public-keys:\n" + "".join(f"  - {k.strip()}\n" for k in spec.ssh_keys)
    network = (
        "version: 2\nethernets:\n  eth0:\n"
        f"    addresses: [{spec.address}/24]\n"
        f"    routes:\n      - to: 0.0.0.0/0\n        via: {gateway}\n"
    )
    hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
    hosts += "".join(f"{addr}\t{name}\n" for name, addr in spec.hosts.items())
    azure = (
        "# gpucl sandbox: what Azure's osProfile gives the VM (adminUsername)\n"
        f"system_info:\n  default_user:\n    name: {spec.admin_user}\n"
        "    lock_passwd: true\n    groups: [adm, sudo]\n    shell: /bin/bash\n"
        # a key-only admin gets passwordless sudo on Azure (the agent writes it to sudoers.d)
        '    sudo: ["ALL=(ALL) NOPASSWD:ALL"]\n'
    )
    return {
        "var/lib/cloud/seed/nocloud/user-data": spec.user_data,
        "var/lib/cloud/seed/nocloud/meta-data": meta,
        "var/lib/cloud/seed/nocloud/network-config": network,
        "etc/hosts": hosts,
        "etc/cloud/cloud.cfg.d/91-gpucl-azure-osprofile.cfg": azure,
        **spec.extra_files,
    }


def write_seed(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith("/user-data"):
            # gzipped, as Azure's customData carries it: cloud-init unpacks it, here as there
            path.write_bytes(gzip_user_data(text))
            path.chmod(0o600)
            continue
        path.write_text(text)
        if "/system-generators/" in rel:
            path.chmod(0o755)


def make_gpu_nodes(state: VmState, spec: MachineSpec) -> list[tuple[Path, str]]:
    """Real char devices /dev/nvidia0..N-1 (195:N), /dev/nvidiactl (195:255), made on the host."""
    d = node_dir(state, spec.name) / "dev"
    d.mkdir(parents=True, exist_ok=True)
    pairs = []
    for i in [*range(spec.gpus), 255] if spec.gpus else []:
        name = "nvidiactl" if i == 255 else f"nvidia{i}"
        path = d / name
        if not path.exists():
            os.mknod(path, 0o666 | 0o020000, os.makedev(NVIDIA_MAJOR, i))
        pairs.append((path, f"/dev/{name}"))
    if spec.gpus:
        pairs.append((make_mig_caps(d, spec.gpus), "/dev/nvidia-caps"))
    return pairs


def make_mig_caps(dev: Path, gpus: int) -> Path:
    """/dev/nvidia-caps/nvidia-capN for every GPU instance and its first compute instance a MIG
    layout can have (clusterctl.spec.mig.cap_minor), as the driver makes them with
    nv_cap_enable_devfs=1 (MIG user guide, "Device Nodes and Capabilities"); all of them exist,
    where the driver makes those of the instances that exist."""
    caps = dev / "nvidia-caps"
    caps.mkdir(exist_ok=True)
    for g in range(gpus):
        for gi in range(GIS_PER_GPU):
            for minor in (cap_minor(g, gi), cap_minor(g, gi, 0)):
                path = caps / f"nvidia-cap{minor}"
                if not path.exists():
                    os.mknod(path, 0o444 | 0o020000, os.makedev(CAPS_MAJOR, minor))
    return caps


HCA_ROOT = "/run/gpucl-sandbox/hca"
HCA_DIR = f"{HCA_ROOT}/infiniband"
PEERMEM_DIR = f"{HCA_ROOT}/module/nvidia_peermem"


def hca_dirs(state: VmState, name: str) -> tuple[Path, Path, Path]:
    """(the node's stand-in HCAs, where a fault puts what it takes away, its nvidia_peermem) on
    the host. The node sees their parent (bound at HCA_ROOT), so a fault's rename is seen inside:
    a bind mount of the directory itself would keep it there."""
    base = node_dir(state, name)
    return (
        base / "hca" / "infiniband",
        base / "hca-removed",
        base / "hca" / "module" / "nvidia_peermem",
    )


def make_hcas(state: VmState, spec: MachineSpec) -> list[tuple[Path, str]]:
    """The node's stand-in HCAs, made once: a reboot keeps what a fault took away, as a dead HCA
    stays dead across a reboot."""
    if not spec.hcas:
        return []
    ib, removed, peermem = hca_dirs(state, spec.name)
    if not ib.exists():
        for dev in spec.hcas:
            port = ib / dev / "ports" / "1"
            port.mkdir(parents=True)
            (port / "state").write_text("4: ACTIVE\n")
            (port / "rate").write_text(f"{spec.hca_rate}\n")
        removed.mkdir(exist_ok=True)
        peermem.mkdir(parents=True, exist_ok=True)
        (peermem / "version").write_text("stand-in\n")
    return [(ib.parent, HCA_ROOT)]


NVME_MODEL = "Microsoft_NVMe_Direct_Disk"  # platform.sh turns _ into spaces for the udev record


def make_nvme(state: VmState, spec: MachineSpec) -> tuple[list[tuple[Path, str]], str]:
    """Sparse files on loop devices standing in for local NVMe: (binds, devices file text)."""
    binds, lines = [], ""
    for i in range(spec.nvme_disks):
        backing = node_dir(state, spec.name) / f"nvme{i}.img"
        with open(backing, "wb") as f:
            f.truncate(spec.nvme_size_mib << 20)
        state.record("loop", str(backing))
        dev = _run(["losetup", "-f", "--show", str(backing)]).strip()
        binds.append((Path(dev), dev))
        lines += f"- {dev} {NVME_MODEL}\n"
    return binds, lines


RESOURCE_DISK = "/dev/disk/cloud/azure_resource"
"""Where Azure's udev rules (and so DataSourceAzure's RESOURCE_DISK_PATH) put the resource disk."""


def make_data_disks(
    state: VmState, spec: MachineSpec, disks: tuple[tuple[str, int], ...] | None = None,
    prefix: str = "data",
) -> tuple[list[tuple[Path, str]], str]:  # fmt: skip
    """Data disks: loop devices partitioned on the host (GPT, one partition) so the partition's
    device node exists before boot; there is no udev in the node to make it later, and this
    kernel reads no partition tables (partx adds the partition)."""
    binds, lines = [], ""
    for i, (link, size_mib) in enumerate(spec.data_disks if disks is None else disks):
        backing = node_dir(state, spec.name) / f"{prefix}{i}.img"
        with open(backing, "wb") as f:
            f.truncate(size_mib << 20)
        state.record("loop", str(backing))
        dev = _run(["losetup", "-P", "-f", "--show", str(backing)]).strip()
        _run(["sfdisk", "--quiet", dev], stdin="label: gpt\n,,L\n")
        _run(["partx", "-a", dev])  # this kernel parses no partition tables: add it by hand
        part = f"{dev}p1"
        deadline = time.monotonic() + 5
        while not Path(part).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        binds += [(Path(dev), dev), (Path(part), part)]
        lines += f"{link} {dev}\n{link}-part1 {part}\n"
    return binds, lines


RESOURCE_FILES = Path(__file__).parent / "files" / "resource-disk"


def resource_disk_files() -> dict[str, str]:
    """What the platform gives a node with a resource disk besides the disk (substitution
    resource-disk): cloud-init's NoCloud datasource with Azure's naming of ephemeral0, and the
    fstab generator a VM's systemd has for _netdev device entries (path -> text)."""
    return {
        str(path.relative_to(RESOURCE_FILES)): path.read_text()
        for path in sorted(RESOURCE_FILES.rglob("*"))
        if path.is_file()
    }


def _run(argv: list[str], stdin: str | None = None) -> str:
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {proc.stderr.strip()}")
    return proc.stdout


def cgroup_dirs(state: VmState, name: str) -> list[Path]:
    """This node's subtree in every v1 hierarchy and in the unified one, created and recorded."""
    out = []
    for hierarchy in [*v1_hierarchies(), CGROUP_ROOT / "unified"]:
        if not hierarchy.is_dir():
            continue
        base = hierarchy / f"gpucl-{state.sid}"
        if not any(r.kind == "cgroup" and r.name == str(base) for r in state.resources):
            state.record("cgroup", str(base))
        if not base.exists():
            make_dir(base)
            if (base / "cpu.shares").exists():  # the sandbox weighs as its booting process
                nice = os.getpriority(os.PRIO_PROCESS, 0)
                (base / "cpu.shares").write_text(f"{cpu_shares(nice)}\n")
        make_dir(base / name)
        out.append(base / name)
    return out


def controller_binds(cgroups: list[Path]) -> list[tuple[Path, str]]:
    """nspawn mounts the v1 controller hierarchies read-only; slurmd (proctrack/cgroup, task/cgroup)
    must create its own cgroups. Each node gets its own subtree, writable, bound at
    /run/gpucl-sandbox/cgroup/<controller>; the image's platform.sh mounts it over
    /sys/fs/cgroup/<controller>."""
    return [
        (c, f"/run/gpucl-sandbox/cgroup/{c.parent.parent.name}")
        for c in cgroups
        if c.parent.parent.name not in ("systemd", "unified")
    ]


def nspawn_argv(spec: MachineSpec, root: Path, binds: list[tuple[Path, str]]) -> list[str]:
    argv = [
        "systemd-nspawn",
        "--boot",
        "--register=no",
        "--keep-unit",
        "--quiet",
        f"--directory={root}",
        f"--machine={spec.name}",
        f"--network-namespace-path=/run/netns/{spec.netns}",
        "--capability=CAP_NET_ADMIN",
        "--setenv=LANG=C.UTF-8",
        "--resolv-conf=off",
        "--timezone=off",
        "--link-journal=no",
        "--console=read-only",
    ]
    argv += [f"--bind={src}:{dst}" for src, dst in binds]
    return argv


def start(state: VmState, spec: MachineSpec, lower: str, gateway: str) -> int:
    """Mount, seed and boot one node; returns the PID of its systemd-nspawn."""
    root = mount_root(state, spec, lower)
    seed = seed_files(spec, gateway)
    binds = make_gpu_nodes(state, spec) + make_hcas(state, spec)
    nvme_binds, nvme_lines = make_nvme(state, spec)
    disk_binds, disk_lines = make_data_disks(state, spec)
    if spec.resource_disk_mib:
        res = ((RESOURCE_DISK, spec.resource_disk_mib),)
        res_binds, res_lines = make_data_disks(state, spec, res, prefix="resource")
        disk_binds += res_binds
        disk_lines += res_lines
        seed.update(resource_disk_files())
    if nvme_lines or disk_lines:
        seed["etc/gpucl-sandbox/devices"] = nvme_lines + disk_lines
    write_seed(root, seed)
    binds += nvme_binds + disk_binds
    cgroups = cgroup_dirs(state, spec.name)
    binds += controller_binds(cgroups)
    join = "".join(f"echo $$ > {c}/cgroup.procs; " for c in cgroups)
    # Its own time namespace whose boot clock starts now, at every (re)start: a VM's uptime
    # begins at its boot, and slurmctld accepts a resumed node only once its boot time is later
    # than the resume request ("Still waiting for boot of node").
    clock = "unshare --time --boottime -$(cut -d. -f1 /proc/uptime)"
    argv = ["sh", "-c", f'{join}exec {clock} "$@"', "sh", *nspawn_argv(spec, root, binds)]
    state.nodes[spec.name].update(argv=argv, root=str(root), lower=lower, seed=seed)
    return launch(state, spec.name)


def launch(state: VmState, name: str) -> int:
    """Start (or, after a reboot, start again) a node's recorded systemd-nspawn command."""
    argv = state.nodes[name]["argv"]
    res = state.record("process", f"nspawn@{name}")
    log = node_dir(state, name) / "console.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
        )
    state.set_pid(res, proc.pid)
    state.nodes[name]["pid"] = proc.pid
    state.save()
    return proc.pid


def init_pid(nspawn_pid: int, timeout: float = 30.0) -> int:
    """The container's PID 1 as the host sees it: the child of systemd-nspawn that lives in a new
    PID namespace (nspawn's short-lived "outer child" comes first and shares the host's)."""
    deadline = time.monotonic() + timeout
    host_ns = os.readlink("/proc/self/ns/pid")
    while time.monotonic() < deadline:
        try:
            children = Path(f"/proc/{nspawn_pid}/task/{nspawn_pid}/children").read_text().split()
        except OSError as e:
            raise RuntimeError(f"systemd-nspawn {nspawn_pid} exited") from e
        for child in children:
            try:
                if os.readlink(f"/proc/{child}/ns/pid") != host_ns:
                    return int(child)
            except OSError:
                continue
        time.sleep(0.05)
    raise TimeoutError(f"systemd-nspawn {nspawn_pid} started no container in {timeout:.0f} s")


def exec_argv(init: int, cmd: list[str]) -> list[str]:
    return [
        "nsenter",
        "-t",
        str(init),
        "-a",
        "--",
        "env",
        "-i",
        "LANG=C.UTF-8",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        *cmd,
    ]


def run_in(init: int, cmd: list[str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(exec_argv(init, cmd), capture_output=True, text=True, timeout=timeout)
