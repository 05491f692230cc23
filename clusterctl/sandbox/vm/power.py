"""The sandbox's stand-in for the Azure calls of the power program: a GPU node's VM is started,
deallocated, reimaged or redeployed by starting and stopping its container.

The lab server answers the scheduler's `gpucl-power` (through the backend module the sandbox places
there, files/scheduler/.../sandbox_backend.py) at /gpucl-sandbox/power/<action> and runs
`python -m clusterctl.sandbox.vm.power ACTION VM...` on the host, which prints one JSON object.
VMs are named as Azure names them, `<scale set>_<instance id>`.

What each call does, as Azure does it (substitutions.py, "power-api"):
- deallocate: the guest is shut down (systemd poweroff), the container exits; the OS disk (its
  overlay upper layer) and data disks stay; the local NVMe's contents are lost (zeroed).
- start: the recorded nspawn command boots the same disks again; cloud-init runs nothing new on a
  known instance, systemd starts munge and slurmd, which registers.
  A `start-fails` fault makes the next starts fail as Azure reports it: the call is accepted and
  the instance view then shows the error (`AllocationFailed`), and the VM stays deallocated.
  A `boot-hangs` fault makes a start succeed while the OS never reaches slurmd (masked).
- reimage: deallocate, a fresh OS disk (the upper layer emptied), start: cloud-init runs again.
- redeploy: deallocate and start (new hardware on Azure; here the same host).
- list (the arguments are scale sets): the instance ids of the GPU node VMs each one holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from . import machine, vmstate

ACTIONS = ("state", "start", "deallocate", "reimage", "redeploy", "list", "delete")
STOP_GRACE_S = 60.0
BOOT_DELAY_S = 3.0
"""An ND VM takes minutes to start; a container under a second. slurmctld accepts a resumed node
only if its boot time (now - uptime, whole seconds, uptime rounded up) is not before the resume
request, so a start waits this long: 2 s of rounding and margin."""
ALLOCATION_FAILED = (
    "AllocationFailed: Allocation failed. We do not have sufficient capacity for the requested "
    "VM size in this region."
)


class PowerError(RuntimeError):
    pass


@contextlib.contextmanager
def locked(workdir: Path) -> Iterator[vmstate.VmState]:
    """The sandbox state, loaded and saved under a lock: the lab server serves calls in threads."""
    with vmstate.lock(workdir):
        state = vmstate.load(workdir)
        if state is None:
            raise PowerError(f"no VM sandbox in {workdir}")
        yield state
        state.save()


def node_of(state: vmstate.VmState, vm: str) -> str:
    for name, node in state.nodes.items():
        if node.get("vm_name") == vm and node.get("role") == "gpu" and not node.get("deleted"):
            return name
    raise PowerError(f"no GPU node VM named {vm} in this sandbox")


def running(node: dict) -> bool:
    return "pid" in node and vmstate.proc_start_time(node["pid"]) is not None


def power_state(state: vmstate.VmState, vm: str) -> dict:
    node = state.nodes[node_of(state, vm)]
    power = "running" if running(node) else "stopped"
    return {"power": power, "error": node.get("power_error")}


def deallocate(state: vmstate.VmState, name: str) -> None:
    node = state.nodes[name]
    if running(node):
        machine.run_in(node["init"], ["systemctl", "poweroff", "--no-block"], timeout=30)
        deadline = time.monotonic() + STOP_GRACE_S
        while running(node) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(node["pid"], os.WNOHANG)
            time.sleep(0.2)
        if running(node):  # Azure stops the VM anyway when the guest does not shut down
            with contextlib.suppress(ProcessLookupError):
                os.kill(node["pid"], signal.SIGKILL)
    node.pop("init", None)
    for backing in sorted(machine.node_dir(state, name).glob("nvme*.img")):
        size = backing.stat().st_size
        with open(backing, "r+b") as f:  # the temporary NVMe is wiped on deallocation
            f.truncate(0)
            f.truncate(size)
    _publish(state)


def start(state: vmstate.VmState, name: str) -> None:
    node = state.nodes[name]
    fault = node.get("faults", {}).get("start-fails")
    if fault:
        node["power_error"] = ALLOCATION_FAILED
        return
    node.pop("power_error", None)
    if running(node):
        return
    time.sleep(BOOT_DELAY_S)
    if node.get("faults", {}).get("boot-hangs"):
        machine.mask_slurmd(state, name)
    machine.launch(state, name)
    node["init"] = machine.init_pid(node["pid"])
    _publish(state)


def reimage(state: vmstate.VmState, name: str) -> None:
    deallocate(state, name)
    machine.remount_fresh(state, name)
    start(state, name)


def delete(state: vmstate.VmState, name: str) -> None:
    """A scale-set VM deleted: stopped, then gone from the power calls and the list (its
    container's disks stay until `down`, as the sandbox keeps every node's files for logs)."""
    deallocate(state, name)
    state.nodes[name]["deleted"] = True


def _publish(state: vmstate.VmState) -> None:
    vm_map = Path(state.lab["vm_map"])
    vms = json.loads(vm_map.read_text())
    for node in state.nodes.values():
        vms[node["address"]]["init"] = node.get("init")
    tmp = vm_map.with_name(vm_map.name + ".tmp")
    tmp.write_text(json.dumps(vms, indent=1))
    os.replace(tmp, vm_map)


def act(workdir: Path, action: str, vms: list[str]) -> dict:
    """One call: {vm: {"power", "error"}} for state; {vm: None or why refused} otherwise."""
    if action not in ACTIONS:
        raise PowerError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    out: dict[str, object] = {}
    with locked(workdir) as state:
        if action == "list":
            for scale_set in vms:
                out[scale_set] = sorted(
                    (
                        n["vm_name"].rpartition("_")[2]
                        for n in state.nodes.values()
                        if n.get("role") == "gpu"
                        and not n.get("deleted")
                        and n.get("vm_name", "").rpartition("_")[0] == scale_set
                    ),
                    key=int,
                )
            return out
        for vm in vms:
            try:
                name = node_of(state, vm)
            except PowerError as exc:
                out[vm] = {"power": "unknown", "error": str(exc)} if action == "state" else str(exc)
                continue
            if action == "state":
                out[vm] = power_state(state, vm)
                continue
            if action == "deallocate":
                deallocate(state, name)
            elif action == "start":
                start(state, name)
            elif action == "reimage":
                reimage(state, name)
            elif action == "delete":
                delete(state, name)
            else:
                deallocate(state, name)
                start(state, name)
            out[vm] = None
    return out


RETURN_EVERY_S = 10
RETURN_TIMER_SCALED = (
    f"[Timer]\\nOnActiveSec={RETURN_EVERY_S}s\\nOnUnitActiveSec={RETURN_EVERY_S}s\\n"
    "AccuracySec=1s\\n"
)


CRED_EXPIRE_S = 30
"""Slurm's job credential lifetime, scaled (AuthInfo cred_expire; the rendered slurm.conf keeps
Slurm's default, 120 s): a requeued batch job may start again only after it (SchedMD
src/slurmctld/job_mgr.c, batch_requeue_fini: begin_time = now + cred_expiration() + 1), so every
eviction, failed power-up and replace waits it out. Slurm refuses less than 5 s (interfaces/cred.c);
30 s still outlasts the sandbox's step launches."""
RETURN_AFTER_S = CRED_EXPIRE_S + 1 + 29


def return_after_s() -> int:
    """The scaled hold before `gpucl-power return` gives back a node a failed power-up set DOWN:
    long enough that the job it failed, requeued at that moment, becomes eligible again and is
    placed elsewhere first (Slurm's requeue delay plus a scheduling margin; 900 s on Azure)."""
    return RETURN_AFTER_S


def time_scale(
    workdir: Path, scheduler: str, suspend_s: int, suspend_timeout_s: int, resume_timeout_s: int
) -> None:
    """The time-scale substitution (for tests and benchmarks, never at boot): the rendered
    slurm.conf's power-saving times in seconds and the credential lifetime (Slurm's requeue
    delay) at CRED_EXPIRE_S, power programs as often as Slurm wants (power_save_min_interval 0),
    the power program's deadlines under the scaled timeouts, `scontrol reconfigure` (a restart of
    the daemons since Slurm 23.11, so the credential lifetime applies), gpucl-power polling each
    second, the return timer every 10 s with its hold scaled to `return_after_s()`. Raises when
    the rendered values are not where they are expected."""
    from . import boot

    edits = [
        f"s/^SuspendTime=.*/SuspendTime={suspend_s}/",
        f"s/ SuspendTime=[0-9]\\+/ SuspendTime={suspend_s}/",
        f"s/^SuspendTimeout=.*/SuspendTimeout={suspend_timeout_s}/",
        f"s/^ResumeTimeout=.*/ResumeTimeout={resume_timeout_s}/",
        "s/power_save_min_interval=[0-9]*/power_save_min_interval=0/",
        f"/^AuthInfo=/{{/cred_expire=/!s/$/,cred_expire={CRED_EXPIRE_S}/}}",
    ]
    conf = "/etc/slurm/slurm.conf"
    override = json.dumps(
        {
            "pollSeconds": 1,
            "resumeWaitSeconds": resume_timeout_s - 30,
            "resumeDeadlineSeconds": resume_timeout_s - 30,
            "suspendDeadlineSeconds": max(1, suspend_timeout_s - 1),
            "returnAfterSeconds": return_after_s(),
        }
    )
    timer = "/etc/systemd/system/gpucl-power-return.timer.d"
    script = (
        f"grep -q '^SuspendTime=[0-9]' {conf} && grep -q '^ResumeTimeout=' {conf} && "
        f"{{ grep -q '^AuthInfo=' {conf} || "
        f"printf '\\nAuthInfo=cred_expire={CRED_EXPIRE_S}\\n' >> {conf}; }} && "
        f"sed -i {' '.join('-e ' + shlex.quote(e) for e in edits)} {conf} && "
        f"echo '{override}' > /etc/gpu-clusters/power.d/50-time-scale.json && "
        f"mkdir -p {timer} && printf '{RETURN_TIMER_SCALED}' > {timer}/50-time-scale.conf && "
        "systemctl daemon-reload && systemctl restart gpucl-power-return.timer && "
        # a reconfigure right after a power action can time out while slurmctld is busy: retry
        "{ scontrol reconfigure || { sleep 5 && scontrol reconfigure; } || "
        "{ sleep 15 && scontrol reconfigure; }; } && "
        # since Slurm 23.11 a reconfigure restarts slurmctld: the old one may still answer
        f"for i in $(seq 30); do scontrol show config | grep -q 'cred_expire={CRED_EXPIRE_S}' "
        "&& break; sleep 1; done; scontrol show config"
    )
    proc = boot.run(workdir, scheduler, ["sh", "-c", script])
    if (
        proc.returncode != 0
        or not re.search(rf"SuspendTime\s+=\s+{suspend_s} sec", proc.stdout)
        or not re.search(rf"AuthInfo\s+=\s+\S*cred_expire={CRED_EXPIRE_S}\b", proc.stdout)
    ):
        seen = [ln for ln in proc.stdout.splitlines() if ln.startswith(("AuthInfo", "SuspendTime"))]
        raise PowerError(
            f"time-scale on {scheduler} failed (exit {proc.returncode}; config shows {seen}): "
            f"{proc.stderr.strip()[-300:]}"
        )


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m clusterctl.sandbox.vm.power")
    ap.add_argument("action", choices=ACTIONS)
    ap.add_argument("vms", nargs="*")
    ap.add_argument("--workdir", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        print(json.dumps(act(args.workdir.resolve(), args.action, args.vms)))
    except (PowerError, OSError, RuntimeError) as exc:
        print(json.dumps({"error": str(exc)}))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
