"""Faults a cloud node suffers, injected into a running VM sandbox node, and cleared.

- slow-link: the node's link on the lab bridge limited by `tbf` (this kernel has no netem).
- fail-health: the node's last GPU falls off the bus (its /dev/nvidiaN disappears inside the
  node: nvidia-smi lists one fewer, so the health check's GPU count fails, as on a VM).
- fail-deep: the node's NCCL all-reduce falls below its floor in the deep tier only (the
  azurehpc-health-checks stand-in fails check_nccl_allreduce; the fast tier still passes).
- fail-dcgm: DCGM's level-2 diagnostic reports a failed memory test (the dcgmi stand-in), the
  deep tier's second step.
- kill-slurmd: slurmd killed with SIGKILL and kept down, as when its restarts are used up (the
  user-data's restart policy would bring it back in seconds: a runtime drop-in, removed by `clear`,
  turns it off first; slurmctld notices).
- start-fails: the node's VM cannot be started: each start is accepted, then the instance view
  reports AllocationFailed, as Azure does when a region has no capacity (power.py).
- boot-hangs: the node's VM starts (the platform reports it running) but its OS never gets as far
  as slurmd, as with a hung boot or a bad image: at each start slurmd is masked on its OS disk.
  Slurm's ResumeTimeout then decides (power.py).
- preempt: a spot eviction notice (Scheduled Events `Preempt`, 30 s NotBefore) for the node's VM
  at the IMDS stand-in; approving it deallocates the VM.
- slow-gpu: the node computes slowly, as with a throttled or degraded GPU: its CPU time is capped
  (the CFS quota of its cgroup, SLOW_GPU_SHARE of one core), so the training job's ranks on it
  (gloo on CPU, the sandbox's stand-in for the GPUs) run their steps several times slower.
- drop-hca: one of the node's InfiniBand HCAs is gone (its stand-in device leaves the node's
  list, as a dead HCA leaves /sys/class/infiniband): the last one, or --device NAME. NCCL's lines
  (the probe's) then list one device fewer on that node.
- no-gdr: nvidia_peermem is not loaded on the node: NCCL's channels run without GPUDirect RDMA.
- clear: every fault of the node undone (link, GPU device, slurmd started again, slurmd unmasked,
  CPU quota lifted, HCAs back, nvidia_peermem loaded).
Faults are recorded in the sandbox state, so `clear` knows what to undo.
"""

from __future__ import annotations

import json
import time
import uuid
from email.utils import formatdate
from pathlib import Path

from . import lab as lab_mod
from . import machine, vmstate

KINDS = (
    "slow-link",
    "fail-health",
    "fail-deep",
    "fail-dcgm",
    "kill-slurmd",
    "start-fails",
    "boot-hangs",
    "preempt",
    "slow-gpu",
    "drop-hca",
    "no-gdr",
    "clear",
)


FAIL_CHECKS = "/run/gpucl-sandbox/fail-checks"
"""Checks the node's NHC and azurehpc-health-checks stand-ins fail (one name per line)."""
DEEP_CHECK = "check_nccl_allreduce"
DCGM_CHECK = "dcgm_diag"
KEEP_DOWN = "/run/systemd/system/slurmd.service.d/99-gpucl-sandbox-fault.conf"
SLOW_GPU_SHARE = 0.25
"""slow-gpu: the share of one CPU core the node keeps (CFS quota over period)."""
CFS_PERIOD_US = 100_000
"""kill-slurmd's runtime drop-in: sorts after the restart drop-in, so its Restart=no wins."""


class FaultError(RuntimeError):
    pass


def _node(workdir: Path, node: str) -> tuple[vmstate.VmState, dict]:
    state = vmstate.load(workdir.resolve())
    if state is None:
        raise FaultError(f"no VM sandbox in {workdir}")
    if node not in state.nodes:
        raise FaultError(f"no node {node} in the sandbox (nodes: {', '.join(state.nodes)})")
    return state, state.nodes[node]


def _sh(info: dict, script: str) -> str:
    proc = machine.run_in(info["init"], ["sh", "-c", script])
    if proc.returncode != 0:
        raise FaultError(f"{script}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def inject(
    workdir: Path, node: str, kind: str, rate: str = "20mbit", device: str | None = None
) -> str:
    """Inject `kind` on `node`; returns what was done, in one line."""
    with vmstate.lock(workdir.resolve()):
        return _inject(workdir, node, kind, rate, device)


def _drop_hca(state: vmstate.VmState, node: str, device: str | None) -> str:
    ib, removed, _ = machine.hca_dirs(state, node)
    present = sorted((p.name for p in ib.iterdir()), key=_natural) if ib.is_dir() else []
    if not present:
        raise FaultError(
            f"{node} has no InfiniBand HCA left to take away (a GPU node of an ND size has 8)"
        )
    dev = device or present[-1]
    if dev not in present:
        raise FaultError(f"{node} has no HCA {dev!r} (it has {', '.join(present)})")
    (ib / dev).rename(removed / dev)
    return dev


def _natural(name: str) -> tuple[str, int]:
    head = name.rstrip("0123456789")
    return head, int(name[len(head) :] or -1)


def _inject(workdir: Path, node: str, kind: str, rate: str, device: str | None = None) -> str:
    if kind not in KINDS:
        raise FaultError(f"unknown fault {kind!r}; one of {', '.join(KINDS)}")
    state, info = _node(workdir, node)
    if kind == "clear":
        return _clear(workdir, node)
    faults = info.setdefault("faults", {})
    if kind == "slow-link":
        lab_mod.slow_link(lab_mod.Lab(state.sid), info["index"], node, rate)
        faults["slow-link"] = rate
        done = f"{node}: link limited to {rate}"
    elif kind == "fail-health":
        last = _sh(info, "ls /dev | grep -E '^nvidia[0-9]+$' | sort -V | tail -n 1").strip()
        if not last:
            raise FaultError(f"{node} has no GPU device left to remove")
        # a bind mount from the host: unmount it, so the node no longer has the device at all
        _sh(info, f"umount /dev/{last} 2>/dev/null; rm -f /dev/{last}")
        faults.setdefault("fail-health", []).append(last)
        done = f"{node}: /dev/{last} removed (the GPU fell off the bus)"
    elif kind in ("fail-deep", "fail-dcgm"):
        check = DEEP_CHECK if kind == "fail-deep" else DCGM_CHECK
        _sh(info, f"mkdir -p /run/gpucl-sandbox && echo {check} >> {FAIL_CHECKS}")
        faults[kind] = check
        done = f"{node}: {check} fails in the deep tier"
    elif kind == "start-fails":
        faults["start-fails"] = True
        done = f"{node}: its VM's next starts fail (AllocationFailed)"
    elif kind == "boot-hangs":
        faults["boot-hangs"] = True
        done = f"{node}: its VM's next starts never reach slurmd (slurmd masked at boot)"
    elif kind == "slow-gpu":
        quota = int(SLOW_GPU_SHARE * CFS_PERIOD_US)
        _cpu_quota(state, node, quota)
        faults["slow-gpu"] = quota
        done = f"{node}: CPU capped at {SLOW_GPU_SHARE:.0%} of a core (its GPU stand-in is slow)"
    elif kind == "drop-hca":
        dev = _drop_hca(state, node, device)
        faults.setdefault("drop-hca", []).append(dev)
        done = f"{node}: InfiniBand HCA {dev} gone"
    elif kind == "no-gdr":
        _, removed, peermem = machine.hca_dirs(state, node)
        if not peermem.is_dir():
            raise FaultError(f"{node} has no nvidia_peermem to unload (no InfiniBand here)")
        peermem.rename(removed / peermem.name)
        faults["no-gdr"] = True
        done = f"{node}: nvidia_peermem unloaded (no GPUDirect RDMA)"
    elif kind == "preempt":
        event = _preempt(state, info)
        faults["preempt"] = event["EventId"]
        done = f"{node}: Preempt {event['EventId']} for {event['Resources'][0]}"
    else:
        keep_down = f"printf '[Service]\\nRestart=no\\n' > {KEEP_DOWN}"
        _sh(
            info,
            f"mkdir -p {KEEP_DOWN.rsplit('/', 1)[0]} && {keep_down}"
            " && systemctl daemon-reload && (pkill -KILL -x slurmd || true)",
        )
        faults["kill-slurmd"] = True
        done = f"{node}: slurmd killed (SIGKILL)"
    state.save()
    return done


def _preempt(state: vmstate.VmState, info: dict) -> dict:
    """Azure's Scheduled Events document entry for a spot eviction of this VM."""
    when = time.time() + 30
    event = {
        "EventId": str(uuid.uuid4()).upper(),
        "EventType": "Preempt",
        "ResourceType": "VirtualMachine",
        "Resources": [info["vm_name"]],
        "EventStatus": "Scheduled",
        "NotBefore": formatdate(when, usegmt=True),
        "Description": "The virtual machine is being evicted (gpucl sandbox fault)",
        "EventSource": "Platform",
        "DurationInSeconds": -1,
    }
    _edit_events(state, info, lambda events: [*events, event])
    return event


def _edit_events(state: vmstate.VmState, info: dict, change) -> None:
    vm_map = Path(state.lab["vm_map"])
    vms = json.loads(vm_map.read_text())
    doc = vms[info["address"]].setdefault("scheduledevents", {"DocumentIncarnation": 0})
    doc["Events"] = change(doc.get("Events") or [])
    doc["DocumentIncarnation"] = doc.get("DocumentIncarnation", 0) + 1
    lab_mod.write_vm_map(vm_map, vms)


def _cpu_quota(state: vmstate.VmState, node: str, quota_us: int) -> None:
    """The node's CFS quota in the cgroup v1 cpu hierarchy (-1: none); the node's processes,
    Slurm's job cgroups included, live below it (machine.cgroup_dirs)."""
    dirs = [d for d in machine.cgroup_dirs(state, node) if "cpu" in d.parent.parent.name.split(",")]
    if not dirs:
        raise FaultError("this host has no cgroup v1 cpu hierarchy to cap a node's CPU in")
    for d in dirs:
        (d / "cpu.cfs_period_us").write_text(f"{CFS_PERIOD_US}\n")
        (d / "cpu.cfs_quota_us").write_text(f"{quota_us}\n")


def clear(workdir: Path, node: str) -> str:
    with vmstate.lock(workdir.resolve()):
        return _clear(workdir, node)


def _clear(workdir: Path, node: str) -> str:
    state, info = _node(workdir, node)
    faults = info.pop("faults", {})
    if faults.get("preempt"):
        _edit_events(state, info, lambda evs: [e for e in evs if e["EventId"] != faults["preempt"]])
    lab_mod.clear_link(lab_mod.Lab(state.sid), info["index"], node)
    for dev in faults.get("fail-health", []):
        minor = int(dev.removeprefix("nvidia"))
        _sh(info, f"[ -e /dev/{dev} ] || mknod -m 666 /dev/{dev} c {machine.NVIDIA_MAJOR} {minor}")
    if faults.get("kill-slurmd"):
        _sh(info, f"rm -f {KEEP_DOWN} && systemctl daemon-reload && systemctl start slurmd")
    if faults.get("boot-hangs"):
        machine.unmask_slurmd(state, node)
    if faults.get("fail-deep") or faults.get("fail-dcgm"):
        _sh(info, f"rm -f {FAIL_CHECKS}")
    if faults.get("slow-gpu"):
        _cpu_quota(state, node, -1)
    ib, removed, peermem = machine.hca_dirs(state, node)
    for dev in faults.get("drop-hca", []):
        (removed / dev).rename(ib / dev)
    if faults.get("no-gdr"):
        (removed / peermem.name).rename(peermem)
    state.save()
    return f"{node}: cleared {', '.join(sorted(faults)) or 'nothing (no faults recorded)'}"
