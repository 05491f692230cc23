"""Boot a cluster of VM-like nodes from rendered user-data, report how each booted, tear it down.

specs = cluster_from_plan(Path("/tmp/plan-h100"))      # or build NodeSpec by hand
reports = up(specs, Path("/tmp/sbx"), timeout=600)      # boots, waits for cloud-init, reports
run(Path("/tmp/sbx"), "h100-scheduler", ["sinfo"])      # nsenter into a node
down(Path("/tmp/sbx"))                                  # idempotent; works after a SIGKILL of up
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from clusterctl.power.names import vm_name

from . import github, machine, repo, substitutions, vmstate
from . import image as image_mod
from . import lab as lab_mod
from . import report as report_mod
from .report import report_node, summary, wait_cloud_init
from .vmstate import VmState


class BootError(RuntimeError):
    pass


@dataclass(frozen=True)
class NodeSpec:
    name: str
    """Hostname as Azure sets it: scheduler's computerName, scale-set VM prefix + base36 id."""
    role: str
    """"scheduler", "login" or "gpu" (a jump host is not booted: it has no user-data)."""
    user_data: str
    vm_name: str
    """Azure's VM name, what IMDS returns as `name`: a scale-set VM is <scale set>_<instance id>."""
    scale_set: str = ""
    vm_size: str = ""
    gpus: int = 0
    nvme_disks: int = 0
    data_disks: tuple[tuple[str, int], ...] = ()
    resource_disk_mib: int = 0
    """Azure's resource (temp) disk on sizes that have one (substitution resource-disk)."""


RESOURCE_DISK_MIB = 1024
"""The resource disk's stand-in size (a sparse file): the cloud's is thousands of GiB."""


def resource_disk_mib(vm_size: str) -> int:
    from clusterctl.spec.catalog import catalog

    sku = catalog().get(vm_size, "azure") if vm_size else None
    return RESOURCE_DISK_MIB if sku is not None and sku.resource_disk_gi_b else 0


def standin_hcas(vm_size: str) -> dict:
    """The InfiniBand HCAs a GPU VM of this size has (the catalog's fabric.nccl), as MachineSpec
    fields: none for a size without InfiniBand."""
    from clusterctl.spec.catalog import catalog

    sku = catalog().get(vm_size, "azure") if vm_size else None
    if sku is None or sku.fabric.kind != "infiniband" or sku.fabric.nccl is None:
        return {}
    proof = sku.fabric.nccl
    if not proof.device_prefix:
        return {}
    gen = f" (4X {sku.fabric.generation})" if sku.fabric.generation else ""
    return {
        "hcas": tuple(f"{proof.device_prefix}{i}" for i in range(proof.devices)),
        "hca_rate": f"{sku.fabric.gbps_per_nic:g} Gb/sec{gen}" if sku.fabric.gbps_per_nic else "",
    }


def _publish_inits(state: VmState) -> None:
    """Tell the lab server each node's PID 1 (the NFS stand-in enters nodes by it)."""
    vm_map = Path(state.lab["vm_map"])
    vms = json.loads(vm_map.read_text())
    for node in state.nodes.values():
        vms[node["address"]]["init"] = node.get("init")
    lab_mod.write_vm_map(vm_map, vms)


def cluster_from_plan(
    plan_dir: Path, nodes: int | None = None, gpus: int = 8, nvme_disks: int = 1
) -> list[NodeSpec]:
    """Scheduler + scale-set VMs of a `clusterctl plan --out` directory, with their user-data."""
    plan = json.loads((plan_dir / "plan.json").read_text())
    if any(r["type"] == "azure-native:storage:FileShare" for r in plan["resources"]):
        raise BootError(
            "storage.kind azure-files-nfs: the sandbox has no stand-in for an Azure Files share "
            "yet (it stands in for scheduler-nfs); boot the stack with storage.kind "
            "scheduler-nfs"
        )
    if any(r["type"] == "azure-native:storagecache:AmlFilesystem" for r in plan["resources"]):
        # no declared substitution: a Lustre server needs kernel modules the sandbox's VMs lack
        raise BootError(
            "storage.lustre: the sandbox has no stand-in for Azure Managed Lustre (its VMs have "
            "no Lustre kernel modules); boot the stack without storage.lustre"
        )
    cloud_init = plan_dir / "cloud-init"
    node_yamls = sorted(
        p for p in cloud_init.glob("*.yaml") if p.name not in ("scheduler.yaml", "login.yaml")
    )
    specs: list[NodeSpec] = []
    logins: list[NodeSpec] = []
    for res in plan["resources"]:
        inputs = res.get("inputs", {})
        role = inputs.get("tags", {}).get("gpu-clusters:role")
        if res["type"] == "azure-native:compute:VirtualMachine" and role == "login":
            name = inputs["osProfile"]["computerName"]
            size = inputs.get("hardwareProfile", {}).get("vmSize", "")
            logins.append(
                NodeSpec(
                    name,
                    "login",
                    (cloud_init / "login.yaml").read_text(),
                    vm_name=name,
                    vm_size=size,
                    resource_disk_mib=resource_disk_mib(size),
                )
            )
        elif res["type"] == "azure-native:compute:VirtualMachine" and role == "scheduler":
            name = inputs["osProfile"]["computerName"]
            specs.insert(
                0,
                NodeSpec(
                    name,
                    "scheduler",
                    (cloud_init / "scheduler.yaml").read_text(),
                    vm_name=name,
                    vm_size=inputs.get("hardwareProfile", {}).get("vmSize", ""),
                    data_disks=(("/dev/disk/azure/scsi1/lun0", 4096),),
                    resource_disk_mib=resource_disk_mib(
                        inputs.get("hardwareProfile", {}).get("vmSize", "")
                    ),
                ),
            )
        elif res["type"] == "azure-native:compute:VirtualMachineScaleSet":
            vmss = inputs["vmScaleSetName"]
            prefix = inputs["virtualMachineProfile"]["osProfile"]["computerNamePrefix"]
            yaml = next((p for p in node_yamls if p.stem in vmss), node_yamls[0])
            count = inputs["sku"]["capacity"] if nodes is None else nodes
            for i in range(count):
                specs.append(
                    NodeSpec(
                        f"{prefix}{_base36(i, 6)}",
                        "gpu",
                        yaml.read_text(),
                        vm_name=vm_name(vmss, i),
                        scale_set=vmss,
                        vm_size=inputs["sku"]["name"],
                        gpus=gpus,
                        nvme_disks=nvme_disks,
                        resource_disk_mib=resource_disk_mib(inputs["sku"]["name"]),
                    )
                )
    return specs[:1] + logins + specs[1:]


def _base36(n: int, width: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n or not out:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.rjust(width, "0")


def up(
    specs: list[NodeSpec],
    workdir: Path,
    timeout: float = 900.0,
    log=print,
    slurm: str | None = None,
) -> dict[str, dict]:
    """Build/reuse the image, start the lab and every node, wait for cloud-init, return reports.
    `slurm`: the Slurm release the nodes install (repo.SLURM_VERSIONS; default $GPUCL_SANDBOX_SLURM
    or the first)."""
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    if vmstate.load(workdir) is not None:
        raise BootError(f"{workdir} has a sandbox already; run down first")
    t0 = time.monotonic()
    slurm = repo.slurm_version(slurm)
    img, repo_dir, hpc = prepare_layers(slurm, log=log)
    stages = {"image": time.monotonic() - t0}
    log(f"up: Slurm {slurm} (Debian's, as slurm-smd stand-ins)")
    state = VmState(workdir=str(workdir), sid=vmstate.sandbox_id(workdir), slurm=slurm)
    state.save()
    t1 = time.monotonic()
    machine.mount_disks(state)
    substitutions.write(workdir)
    lab = lab_mod.Lab(state.sid)
    _start_lab(state, lab, repo_dir, specs)
    key = (repo_dir / "gpucl-sandbox.asc").read_text()
    commits = github.commit_map(repo.github_dir(repo_dir), github.Pins.from_catalog())
    (workdir / "logs").mkdir(exist_ok=True)
    (workdir / "logs" / "pinned-commits.json").write_text(json.dumps(commits, indent=1))
    (workdir / "logs" / "repo-key.asc").write_text(key)
    hosts = {
        **{s.name: state.nodes[s.name]["address"] for s in specs},
        substitutions.MIRROR_HOST: lab.gateway,
        github.HOST: lab.gateway,
    }
    for spec in specs:
        _start_node(state, lab, spec, hosts, key, commits, (img, hpc))
        log(f"up: {spec.name} ({spec.role}) booting at {state.nodes[spec.name]['address']}")
    for name in state.nodes:
        state.nodes[name]["init"] = machine.init_pid(state.nodes[name]["pid"])
    state.save()
    _publish_inits(state)
    stages["start"] = time.monotonic() - t1
    done = wait_cloud_init(state, deadline=time.monotonic() + timeout, log=log)
    stages["cloud-init"] = time.monotonic() - t1 - stages["start"]
    state.phase = "up"
    state.save()
    reports = {name: report_node(state, name, done.get(name, {})) for name in state.nodes}
    (workdir / "report.json").write_text(
        json.dumps({"stages_s": stages, "nodes": reports}, indent=1)
    )
    log("up: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))
    return reports


def prepare_layers(slurm: str | None = None, log=print) -> tuple[image_mod.Image, Path, Path]:
    """The image, the repository of this Slurm release and the HPC layer, built once and shared
    by every sandbox on this machine (under the cache's lock)."""
    with image_mod.cache_lock(log=log):
        img = image_mod.build(log=log)
        repo_dir = repo.prepare(img, log=log, slurm=slurm)
        return img, repo_dir, repo.hpc_layer(img, repo_dir, log=log)


def _start_node(state, lab, spec: NodeSpec, hosts: dict, key: str, commits: dict, layers) -> None:
    img, hpc = layers
    workdir = Path(state.workdir)
    ms = machine.MachineSpec(
        name=spec.name,
        role=spec.role,
        user_data=substitutions.rewrite_user_data(spec.user_data, key, commits),
        address=state.nodes[spec.name]["address"],
        netns=state.nodes[spec.name]["netns"],
        hosts=hosts,
        gpus=spec.gpus,
        **(standin_hcas(spec.vm_size) if spec.role == "gpu" else {}),
        ssh_keys=(_admin_key(workdir),),
        extra_files=substitutions.power_files(lab.gateway) if spec.role == "scheduler" else {},
        nvme_disks=spec.nvme_disks,
        data_disks=spec.data_disks,
        resource_disk_mib=spec.resource_disk_mib,
    )
    (workdir / "logs" / spec.name).mkdir(parents=True, exist_ok=True)
    (workdir / "logs" / spec.name / "user-data").write_text(ms.user_data)
    lower = f"{hpc}:{img.rootfs}" if spec.role == "gpu" else str(img.rootfs)
    machine.start(state, ms, lower, lab.gateway)


def add_node(workdir: Path, spec: NodeSpec, timeout: float = 600.0, log=print) -> dict:
    """A VM the scale set gains in a resize, booted into the running sandbox from its user-data:
    the lab's DNS stand-in (every node's /etc/hosts) learns its name, as Azure DNS would."""
    workdir = workdir.resolve()
    running = vmstate.load(workdir)
    img, repo_dir, hpc = prepare_layers(running.slurm if running else None, log=log)
    with vmstate.lock(workdir):
        state = vmstate.load(workdir)
        if state is None:
            raise BootError(f"no VM sandbox in {workdir}")
        if spec.name in state.nodes:
            raise BootError(f"{spec.name} is in the sandbox already")
        lab = lab_mod.Lab(state.sid)
        index = max(n["index"] for n in state.nodes.values()) + 1
        addr = lab.address(index)
        state.nodes[spec.name] = {
            "role": spec.role,
            "address": addr,
            "index": index,
            "netns": lab.node_netns(spec.name),
            "vm_name": spec.vm_name,
        }
        state.save()
        lab_mod.attach_node(state, lab, spec.name, index)
        vm_map = Path(state.lab["vm_map"])
        vms = json.loads(vm_map.read_text())
        vms[addr] = {
            "hostnames": [spec.name],
            "role": spec.role,
            "compute": lab_mod.imds_compute(spec.vm_name, spec.scale_set, spec.name, spec.vm_size),
        }
        lab_mod.write_vm_map(vm_map, vms)
        for name, node in state.nodes.items():  # running or deallocated: their OS disks
            if name != spec.name:
                with open(Path(node["root"]) / "etc/hosts", "a") as f:
                    f.write(f"{addr}\t{spec.name}\n")
        hosts = {n: v["address"] for n, v in state.nodes.items()}
        hosts |= {substitutions.MIRROR_HOST: lab.gateway, github.HOST: lab.gateway}
        key = (repo_dir / "gpucl-sandbox.asc").read_text()
        commits = github.commit_map(repo.github_dir(repo_dir), github.Pins.from_catalog())
        _start_node(state, lab, spec, hosts, key, commits, (img, hpc))
        state.nodes[spec.name]["init"] = machine.init_pid(state.nodes[spec.name]["pid"])
        state.save()
        _publish_inits(state)
    log(f"add: {spec.name} ({spec.role}) booting at {addr}")
    done = wait_cloud_init(state, time.monotonic() + timeout, log=log, only=[spec.name])
    return report_node(state, spec.name, done.get(spec.name, {}))


def _admin_key(workdir: Path) -> str:
    """The sandbox's own admin SSH key (it stands in for the stack's; see substitutions)."""
    key = workdir / "ssh" / "id_ed25519"
    if not key.exists():
        key.parent.mkdir(mode=0o700, exist_ok=True)
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpucl-sandbox", "-f", str(key)],
            check=True,
        )
    return key.with_suffix(".pub").read_text().strip()


PROBE_DIR = "/sched/gpucl-sandbox"


def lab_proxy_command(state: VmState) -> str:
    """ssh's ProxyCommand into the lab's network, as a bastion's would be on the cloud."""
    relay = Path(__file__).with_name("relay.py")
    return f"nsenter --net=/run/netns/{state.lab['netns']} -- {sys.executable} -I {relay} %h %p"


def login_access(workdir: Path) -> dict:
    """Where a team user logs in (the login node, else the scheduler): its address, a
    known_hosts file pinning its host key, and the lab's ProxyCommand."""
    state = vmstate.load(workdir.resolve())
    if state is None:
        raise BootError(f"no VM sandbox in {workdir}")
    roles = {v["role"]: n for n, v in reversed(state.nodes.items())}
    name = roles.get("login") or roles.get("scheduler")
    if name is None:
        raise BootError(f"the VM sandbox in {workdir} has no login node or scheduler")
    info = state.nodes[name]
    hostkey = machine.run_in(info["init"], ["cat", "/etc/ssh/ssh_host_ed25519_key.pub"])
    if hostkey.returncode != 0:
        raise BootError(f"{name} has no ssh host key yet (is cloud-init done?)")
    parts = hostkey.stdout.split()
    known = Path(state.workdir) / "ssh" / f"known_hosts-{name}"
    known.write_text(f"{info['address']} {parts[0]} {parts[1]}\n")
    return {"node": name, "host": info["address"], "known_hosts": str(known),
            "proxy_command": lab_proxy_command(state)}  # fmt: skip


def validation_access(workdir: Path) -> dict:
    """What `validate --sandbox` needs to reach the scheduler as the cloud's admin would: ssh as
    the admin user with the sandbox's key, through the lab (ProxyCommand), the scheduler's host
    key pinned; and the nccl-tests stand-in (the stdlib ring probe) on the shared /sched."""
    import clusterctl

    state = vmstate.load(workdir.resolve())
    if state is None:
        raise BootError(f"no VM sandbox in {workdir}")
    sched = next((n for n, v in state.nodes.items() if v["role"] == "scheduler"), None)
    if sched is None:
        raise BootError(f"the VM sandbox in {workdir} has no scheduler")
    info = state.nodes[sched]
    ssh = Path(state.workdir) / "ssh"
    hostkey = machine.run_in(info["init"], ["cat", "/etc/ssh/ssh_host_ed25519_key.pub"])
    if hostkey.returncode != 0:
        raise BootError(f"{sched} has no ssh host key yet (is cloud-init done?)")
    parts = hostkey.stdout.split()
    (ssh / "known_hosts").write_text(f"{info['address']} {parts[0]} {parts[1]}\n")
    pkg = Path(clusterctl.__file__).parent
    tar = subprocess.run(
        ["tar", "-C", str(pkg.parent), "--exclude=__pycache__", "-cf", "-",
         "clusterctl/__init__.py", "clusterctl/probe", "clusterctl/nccl"],
        check=True, capture_output=True,
    )  # fmt: skip
    unpack = f"mkdir -p {PROBE_DIR} && tar -C {PROBE_DIR} -xf -"
    put = subprocess.run(
        machine.exec_argv(info["init"], ["sh", "-c", unpack]), input=tar.stdout, capture_output=True
    )
    if put.returncode != 0:
        raise BootError(f"could not copy the probe to {sched}:{PROBE_DIR}: {put.stderr!r}")
    proxy = lab_proxy_command(state)
    sinfo = machine.run_in(info["init"], ["sinfo", "-h", "-N", "-o", "%N"])
    slurm_nodes = sorted(set(sinfo.stdout.split()))
    vms = json.loads(Path(state.lab["vm_map"]).read_text()).values()
    sizes = sorted({v["compute"]["vmSize"] for v in vms if v.get("role") == "gpu"})
    return {
        "gpu_vm_size": sizes[0] if len(sizes) == 1 else None,
        "scheduler": sched,
        "host": info["address"],
        "identity": str(ssh / "id_ed25519"),
        "known_hosts": str(ssh / "known_hosts"),
        "proxy_command": proxy,
        "pythonpath": PROBE_DIR,
        "slurm_nodes": slurm_nodes,
        "sid": state.sid,
    }


def _start_lab(state: VmState, lab: lab_mod.Lab, repo_dir: Path, specs: list[NodeSpec]) -> None:
    lab_mod.create_lab(state, lab)
    vms = {}
    for index, spec in enumerate(specs):
        addr = lab.address(index)
        state.nodes[spec.name] = {
            "role": spec.role,
            "address": addr,
            "index": index,
            "netns": lab.node_netns(spec.name),
            "vm_name": spec.vm_name,
        }
        lab_mod.attach_node(state, lab, spec.name, index)
        vms[addr] = {
            "hostnames": [spec.name],
            "role": spec.role,
            "compute": lab_mod.imds_compute(spec.vm_name, spec.scale_set, spec.name, spec.vm_size),
        }
    vm_map = Path(state.workdir) / "imds-vms.json"
    lab_mod.write_vm_map(vm_map, vms)
    state.lab["vm_map"] = str(vm_map)
    cgroups = machine.cgroup_dirs(state, "lab-server")
    state.lab |= {
        "netns": lab.netns,
        "gateway": lab.gateway,
        "pid": lab_mod.start_server(
            state, lab, repo_dir, repo.github_dir(repo_dir), vm_map, cgroups
        ),
    }
    state.save()


def run(
    workdir: Path, node: str, cmd: list[str], timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    state = vmstate.load(workdir)
    if state is None or node not in state.nodes:
        raise BootError(f"no node {node} in the sandbox at {workdir}")
    return machine.run_in(state.nodes[node]["init"], cmd, timeout=timeout)


def exec_argv(workdir: Path, node: str, cmd: list[str]) -> list[str]:
    """The host command line that runs `cmd` inside `node` (for `sandbox exec`)."""
    state = vmstate.load(workdir)
    if state is None or node not in state.nodes:
        raise BootError(f"no node {node} in the sandbox at {workdir}")
    return machine.exec_argv(state.nodes[node]["init"], cmd)


def status(workdir: Path) -> dict[str, dict]:
    """Per node: role, address, whether its container runs, and `is-system-running` inside."""
    state = vmstate.load(workdir.resolve())
    if state is None:
        return {}
    out = {}
    for name, node in state.nodes.items():
        alive = "init" in node and vmstate.proc_start_time(node["init"]) is not None
        system = ""
        if alive:
            system = machine.run_in(node["init"], ["systemctl", "is-system-running"]).stdout.strip()
        out[name] = {
            "role": node["role"],
            "address": node["address"],
            "running": alive,
            "system": system,
        }
    return out


def reboot(workdir: Path, node: str, timeout: float = 300.0, log=print) -> dict:
    """`systemctl reboot` inside the node; nspawn exits, and the node boots again from the same
    upper layer (what a VM keeps across a reboot), as systemd-nspawn@.service would restart it.
    Returns the node's report once booted (cloud-init reruns nothing on a known instance)."""
    state = vmstate.load(workdir.resolve())
    if state is None or node not in state.nodes:
        raise BootError(f"no node {node} in the sandbox at {workdir}")
    old = state.nodes[node]["pid"]
    machine.run_in(state.nodes[node]["init"], ["systemctl", "reboot"])
    deadline = time.monotonic() + 60
    while vmstate.proc_start_time(old) is not None and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(old, os.WNOHANG)
        time.sleep(0.2)
    if vmstate.proc_start_time(old) is not None:
        raise BootError(f"{node} did not shut down within 60 s of `systemctl reboot`")
    machine.launch(state, node)
    state.nodes[node]["init"] = machine.init_pid(state.nodes[node]["pid"])
    state.save()
    _publish_inits(state)
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        running = machine.run_in(state.nodes[node]["init"], ["systemctl", "is-system-running"])
        if running.stdout.strip() not in ("", "offline", "initializing", "starting"):
            break
        time.sleep(1)
    log(f"reboot: {node} up again in {time.monotonic() - t0:.1f} s")
    done = wait_cloud_init(state, time.monotonic() + timeout, log=log, only=[node])
    return report_node(state, node, done.get(node, {}))


def down(workdir: Path, log=print) -> bool:
    """Remove everything `up` recorded. False when there was nothing to remove."""
    state = vmstate.load(workdir.resolve())
    t0 = time.monotonic()
    if state is None:
        # no state file (deleted with the workdir's contents): release what is found by its name
        found = report_mod.found_resources(workdir)
        if not found:
            return False
        log(f"down: no state file in {workdir}; releasing {len(found)} things found by its name")
        state = VmState(workdir=str(workdir.resolve()), sid=vmstate.sandbox_id(workdir.resolve()))
        state.resources = found
    vmstate.teardown(state, log=log)
    log(f"down: {workdir} released in {time.monotonic() - t0:.1f} s")
    return True


def _main() -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m clusterctl.sandbox.vm.boot")
    ap.add_argument("action", choices=["up", "down", "explain"])
    ap.add_argument("--plan", type=Path, help="a `clusterctl plan --out` directory")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/gpucl-vm-sandbox"))
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()
    if args.action == "explain":
        print(substitutions.explain())
        return 0
    if args.action == "down":
        down(args.workdir)
        return 0
    reports = up(cluster_from_plan(args.plan, args.nodes), args.workdir, timeout=args.timeout)
    print(summary(reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
