"""Boot a cluster of VM-like nodes from rendered user-data, report how each booted, tear it down.

specs = cluster_from_plan(Path("/tmp/plan-h100"))      # or build NodeSpec by hand
reports = up(specs, Path("/tmp/sbx"), timeout=600)      # boots, waits for cloud-init, reports
run(Path("/tmp/sbx"), "h100-scheduler", ["sinfo"])      # nsenter into a node
down(Path("/tmp/sbx"))                                  # idempotent; works after a SIGKILL of up
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import image as image_mod
from . import lab as lab_mod
from . import machine, repo, substitutions, vmstate
from .vmstate import VmState

TERMINAL = ("done", "error", "disabled")


class BootError(RuntimeError):
    pass


@dataclass(frozen=True)
class NodeSpec:
    name: str
    """Hostname as Azure sets it: scheduler's computerName, scale-set VM prefix + base36 id."""
    role: str
    """"scheduler" or "gpu"."""
    user_data: str
    vm_name: str
    """Azure's VM name, what IMDS returns as `name`: a scale-set VM is <scale set>_<instance id>."""
    scale_set: str = ""
    vm_size: str = ""
    gpus: int = 0
    nvme_disks: int = 0


def cluster_from_plan(
    plan_dir: Path, nodes: int | None = None, gpus: int = 8, nvme_disks: int = 1
) -> list[NodeSpec]:
    """Scheduler + scale-set VMs of a `clusterctl plan --out` directory, with their user-data."""
    plan = json.loads((plan_dir / "plan.json").read_text())
    cloud_init = plan_dir / "cloud-init"
    node_yamls = sorted(p for p in cloud_init.glob("*.yaml") if p.name != "scheduler.yaml")
    specs: list[NodeSpec] = []
    for res in plan["resources"]:
        inputs = res.get("inputs", {})
        if res["type"] == "azure-native:compute:VirtualMachine":
            name = inputs["osProfile"]["computerName"]
            specs.insert(
                0,
                NodeSpec(
                    name,
                    "scheduler",
                    (cloud_init / "scheduler.yaml").read_text(),
                    vm_name=name,
                    vm_size=inputs.get("hardwareProfile", {}).get("vmSize", ""),
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
                        vm_name=f"{vmss}_{i}",
                        scale_set=vmss,
                        vm_size=inputs["sku"]["name"],
                        gpus=gpus,
                        nvme_disks=nvme_disks,
                    )
                )
    return specs


def _base36(n: int, width: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n or not out:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.rjust(width, "0")


def sandbox_id(workdir: Path) -> str:
    return hashlib.sha1(str(workdir.resolve()).encode()).hexdigest()[:6]


def up(specs: list[NodeSpec], workdir: Path, timeout: float = 900.0, log=print) -> dict[str, dict]:
    """Build/reuse the image, start the lab and every node, wait for cloud-init, return reports."""
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    if vmstate.load(workdir) is not None:
        raise BootError(f"{workdir} has a sandbox already; run down first")
    t0 = time.monotonic()
    img = image_mod.build(log=log)
    repo_dir = repo.prepare(img, log=log)
    stages = {"image": time.monotonic() - t0}
    state = VmState(workdir=str(workdir), sid=sandbox_id(workdir))
    state.save()
    substitutions.write(workdir)
    lab = lab_mod.Lab(state.sid)
    t1 = time.monotonic()
    _start_lab(state, lab, repo_dir, specs)
    key = (repo_dir / "gpucl-sandbox.asc").read_text()
    (workdir / "logs").mkdir(exist_ok=True)
    (workdir / "logs" / "repo-key.asc").write_text(key)
    sched_root = {
        s.name: machine.node_dir(state, s.name) / "root" for s in specs if s.role == "scheduler"
    }
    for spec in specs:
        ms = machine.MachineSpec(
            name=spec.name,
            role=spec.role,
            user_data=substitutions.rewrite_user_data(spec.user_data, key),
            address=state.nodes[spec.name]["address"],
            netns=state.nodes[spec.name]["netns"],
            hosts={
                **{s.name: state.nodes[s.name]["address"] for s in specs},
                substitutions.MIRROR_HOST: lab.gateway,
            },
            gpus=spec.gpus,
            nvme_disks=spec.nvme_disks,
            nfs_servers=sched_root if spec.role != "scheduler" else {},
        )
        (workdir / "logs" / spec.name).mkdir(parents=True, exist_ok=True)
        (workdir / "logs" / spec.name / "user-data").write_text(ms.user_data)
        machine.start(state, ms, img.rootfs, lab.gateway)
        log(f"up: {spec.name} ({spec.role}) booting at {ms.address}")
    for name in state.nodes:
        state.nodes[name]["init"] = machine.init_pid(state.nodes[name]["pid"])
    state.save()
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
        }
        lab_mod.attach_node(state, lab, spec.name, index)
        vms[addr] = {
            "compute": lab_mod.imds_compute(spec.vm_name, spec.scale_set, spec.name, spec.vm_size)
        }
    vm_map = Path(state.workdir) / "imds-vms.json"
    lab_mod.write_vm_map(vm_map, vms)
    cgroups = machine.cgroup_dirs(state, "lab-server")
    state.lab = {
        "netns": lab.netns,
        "gateway": lab.gateway,
        "pid": lab_mod.start_server(state, lab, repo_dir, vm_map, cgroups),
    }
    state.save()


def cloud_init_status(init: int) -> dict:
    proc = machine.run_in(init, ["cloud-init", "status", "--format=json"], timeout=30)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return {"status": "unknown", "raw": (proc.stdout + proc.stderr)[-300:]}


def wait_cloud_init(
    state: VmState, deadline: float, log=print, only: list[str] | None = None
) -> dict[str, dict]:
    """Poll every node's `cloud-init status` until all are final; print each stage change."""
    last: dict[str, str] = {}
    final: dict[str, dict] = {}
    t0 = time.monotonic()
    names = only or list(state.nodes)
    while len(final) < len(names):
        for name in names:
            node = state.nodes[name]
            if name in final:
                continue
            st = cloud_init_status(node["init"])
            stage = st.get("stage") or ""
            key = f"{st.get('status')}|{st.get('extended_status')}|{stage}"
            if last.get(name) != key:
                log(
                    f"  {time.monotonic() - t0:6.1f} s  {name}: "
                    f"{st.get('extended_status') or st.get('status')}"
                    + (f" ({stage})" if stage else "")
                )
                last[name] = key
            if st.get("status") in TERMINAL and "running" not in st.get("extended_status", ""):
                final[name] = st
        if time.monotonic() > deadline:
            missing = sorted(set(names) - set(final))
            log(f"up: cloud-init not finished on {', '.join(missing)} before the deadline")
            break
        time.sleep(2)
    return final


def report_node(state: VmState, name: str, status: dict) -> dict:
    """cloud-init result, failed units, system state; logs copied to <workdir>/nodes/<name>/logs."""
    init = state.nodes[name]["init"]
    failed = machine.run_in(init, ["systemctl", "--failed", "--plain", "--no-legend"]).stdout
    running = machine.run_in(init, ["systemctl", "is-system-running"]).stdout.strip()
    logs = Path(state.workdir) / "logs" / name
    logs.mkdir(parents=True, exist_ok=True)
    for path in ("/var/log/cloud-init-output.log", "/var/log/cloud-init.log"):
        out = machine.run_in(init, ["cat", path]).stdout
        (logs / Path(path).name).write_text(out)
    (logs / "journal.txt").write_text(
        machine.run_in(init, ["journalctl", "-b", "--no-pager"]).stdout
    )
    return {
        "cloud_init": status.get("status", "unfinished"),
        "extended_status": status.get("extended_status", ""),
        "errors": status.get("errors", []),
        "recoverable_errors": status.get("recoverable_errors", {}),
        "failed_units": [line.split()[0] for line in failed.splitlines() if line.strip()],
        "system": running,
    }


def run(
    workdir: Path, node: str, cmd: list[str], timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    state = vmstate.load(workdir)
    if state is None or node not in state.nodes:
        raise BootError(f"no node {node} in the sandbox at {workdir}")
    return machine.run_in(state.nodes[node]["init"], cmd, timeout=timeout)


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
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        running = machine.run_in(state.nodes[node]["init"], ["systemctl", "is-system-running"])
        if running.stdout.strip() not in ("", "initializing", "starting"):
            break
        time.sleep(1)
    log(f"reboot: {node} up again in {time.monotonic() - t0:.1f} s")
    done = wait_cloud_init(state, time.monotonic() + timeout, log=log, only=[node])
    return report_node(state, node, done.get(node, {}))


def down(workdir: Path, log=print) -> bool:
    """Remove everything `up` recorded. False when there was nothing to remove."""
    state = vmstate.load(workdir.resolve())
    if state is None:
        return False
    t0 = time.monotonic()
    vmstate.teardown(state, log=log)
    log(f"down: {workdir} released in {time.monotonic() - t0:.1f} s")
    return True


def leftovers(workdir: Path) -> list[str]:
    """What of the sandbox at `workdir` still exists (empty after a clean `down`): processes whose
    command line names the workdir, its namespaces, mounts under it, its cgroups, its state file."""
    workdir = workdir.resolve()
    sid = sandbox_id(workdir)
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if str(workdir) in cmd and int(proc.name) != os.getpid():
                found.append(f"process {proc.name}: {cmd[:120]}")
    netns = Path("/run/netns")
    found += [
        f"netns {p.name}"
        for p in (netns.iterdir() if netns.is_dir() else [])
        if p.name.startswith(f"gpucl-{sid}-")
    ]
    with open("/proc/self/mountinfo") as f:
        found += [
            f"mount {line.split()[4]}" for line in f if line.split()[4].startswith(str(workdir))
        ]
    found += [f"cgroup {p}" for p in Path("/sys/fs/cgroup").glob(f"*/gpucl-{sid}")]
    if (workdir / vmstate.STATE_FILE).exists():
        found.append(f"file {workdir / vmstate.STATE_FILE}")
    return found


def summary(reports: dict[str, dict]) -> str:
    lines = []
    for name, r in reports.items():
        lines.append(
            f"{name}: cloud-init {r['extended_status'] or r['cloud_init']}, system {r['system']}, "
            f"failed units: {', '.join(r['failed_units']) or 'none'}"
        )
        lines += [f"    error: {e}" for e in r["errors"]]
        for level, msgs in (r["recoverable_errors"] or {}).items():
            lines += [f"    {level.lower()}: {m}" for m in msgs]
    return "\n".join(lines)


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
