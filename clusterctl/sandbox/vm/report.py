"""What a booted node says about its boot: cloud-init's status, failed units, the system state;
and what of a sandbox is left on the host (after `down`: nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from . import machine, vmstate
from .vmstate import VmState

TERMINAL = ("done", "error", "disabled")


def cloud_init_status(init: int) -> dict:
    proc = machine.run_in(init, ["cloud-init", "status", "--format=json"], timeout=30)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return {"status": "unknown", "raw": (proc.stdout + proc.stderr)[-300:]}


def run_dir_files(init: int) -> tuple[str | None, bool]:
    """(the stage cloud-init is in, whether it wrote result.json), read from its run dir through the
    node's root on the host: no process in the node. cloud-init writes status.json at each stage
    and result.json when modules-final ends."""
    run = Path(f"/proc/{init}/root/run/cloud-init")
    try:
        stage = json.loads((run / "status.json").read_text()).get("v1", {}).get("stage")
    except (OSError, ValueError, AttributeError):
        stage = None
    return stage, (run / "result.json").exists()


BOOT_CHECK_EVERY = 5
"""Polling rounds between two looks at whether a node's boot is over (`systemctl
is-system-running`, a C program) while it has written no result.json: a disabled or crashed
cloud-init writes none. `cloud-init status` itself (a Python start, ~0.45 CPU-s) is asked only once
a node's verdict is due: 25 such calls per 1+4 boot were a tenth of the nodes' CPU time."""
BOOTING = ("", "offline", "initializing", "starting")


def system_state(init: int) -> str:
    return machine.run_in(init, ["systemctl", "is-system-running"], timeout=30).stdout.strip()


def verdict_due(finished: bool, rounds: int, boot_state) -> bool:
    """Whether to ask `cloud-init status` for a node's verdict this round: once result.json is
    written, or when the node's boot is over without it (`boot_state()` asked every
    BOOT_CHECK_EVERY rounds only)."""
    if finished:
        return True
    return rounds % BOOT_CHECK_EVERY == BOOT_CHECK_EVERY - 1 and boot_state() not in BOOTING


def wait_cloud_init(
    state: VmState, deadline: float, log=print, only: list[str] | None = None, interval=1.0
) -> dict[str, dict]:
    """Wait until cloud-init's verdict on every node is final; print each stage change. A node
    whose boot ended without cloud-init's result (disabled, crashed) is final with whatever
    `cloud-init status` says of it then, so `up` reports it instead of waiting out the deadline."""
    last: dict[str, str] = {}
    final: dict[str, dict] = {}
    t0 = time.monotonic()
    names = only or list(state.nodes)
    rounds = 0
    while len(final) < len(names):
        for name in names:
            if name in final:
                continue
            init = state.nodes[name]["init"]
            stage, finished = run_dir_files(init)
            # between two stages status.json names none: keep showing the last one
            shown = f"running ({stage})" if stage else last.get(name, "booting")
            if verdict_due(finished, rounds, lambda init=init: system_state(init)):
                st = cloud_init_status(init)
                shown = st.get("extended_status") or st.get("status") or "unknown"
                if not finished or (st.get("status") in TERMINAL and "running" not in shown):
                    final[name] = st
            if last.get(name) != shown:
                log(f"  {time.monotonic() - t0:6.1f} s  {name}: {shown}")
                last[name] = shown
        if len(final) == len(names):
            break
        if time.monotonic() > deadline:
            missing = sorted(set(names) - set(final))
            log(f"up: cloud-init not finished on {', '.join(missing)} before the deadline")
            break
        rounds += 1
        time.sleep(interval)
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


def _ancestors(pid: int) -> set[int]:
    out = set()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return out


def found_resources(workdir: Path) -> list[vmstate.Resource]:
    """The sandbox at `workdir` as found on the machine, not as recorded: processes whose command
    line names the workdir, its namespaces, mounts under it, its cgroups, its loop devices, and
    the nodes' disks (the sparse disks image and the folder it is mounted on)."""
    workdir = workdir.resolve()
    sid = vmstate.sandbox_id(workdir)
    found: list[vmstate.Resource] = []
    mine = _ancestors(os.getpid())  # the command asking (and what started it) names the workdir
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            pid = int(proc.name)
            if str(workdir) in cmd and pid not in mine:
                found.append(
                    vmstate.Resource("process", cmd[:120], pid, vmstate.proc_start_time(pid))
                )
    found += [
        vmstate.Resource("cgroup", str(p)) for p in Path("/sys/fs/cgroup").glob(f"*/gpucl-{sid}")
    ]
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4].removesuffix("//deleted") for line in f]
    mounts = [m for m in points if m.startswith(str(workdir))]
    found += [vmstate.Resource("mount", m) for m in sorted(set(mounts), key=len)]
    listing = subprocess.run(
        ["losetup", "-n", "-O", "BACK-FILE", "-l"], capture_output=True, text=True
    ).stdout
    loops = {ln.strip().removesuffix(" (deleted)") for ln in listing.splitlines()}
    found += [vmstate.Resource("loop", f) for f in sorted(loops) if f.startswith(str(workdir))]
    netns = Path("/run/netns")
    found += [
        vmstate.Resource("netns", p.name)
        for p in (netns.iterdir() if netns.is_dir() else [])
        if p.name.startswith(f"gpucl-{sid}-")
    ]
    disks = [workdir / machine.DISKS_IMAGE, workdir / "nodes"]
    found += [vmstate.Resource("dir", str(p)) for p in disks if os.path.lexists(p)]
    return found


def leftovers(workdir: Path) -> list[str]:
    """What of the sandbox at `workdir` still exists (empty after a clean `down`)."""
    found = [
        f"process {r.pid}: {r.name}" if r.kind == "process" else f"{r.kind} {r.name}"
        for r in found_resources(workdir)
    ]
    state_file = workdir.resolve() / vmstate.STATE_FILE
    if state_file.exists():
        found.append(f"file {state_file}")
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


def _state(workdir: Path, node: str) -> VmState:
    state = vmstate.load(workdir.resolve())
    if state is None or node not in state.nodes:
        raise LookupError(f"no node {node} in the sandbox at {workdir}")
    return state
