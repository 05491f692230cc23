"""A month in a day (docs/decisions/0006): a scripted month of a Slurm
cluster's day-2 life, played on a booted VM sandbox (1 scheduler + 4 GPU nodes) with the
power-saving times scaled to seconds, and the cluster's invariants checked after every step and at
every poll.

    soak = Soak.boot(workdir)            # plan azure-h100 with 4 nodes, boot, time-scale
    try:
        result = soak.play()             # every step of MONTH, in order
    finally:
        soak.down()
    print(result.table())

The month: users' jobs (arrays, 2-node, short and long), idle gaps that power nodes down, an
admin's maintenance drain (kept through power down and up, lifted by the admin), a health fault
(the node's health check drains it `gpucl: ...`, and lifts it once healthy), a spot eviction of a
node running a job, a failed resume (then the scheduler's return service), a node replace, a
reboot, a scheduler re-create (its VM reimaged: a new OS disk, the protected data disk kept), and a
resize across a scale-set boundary and back (maxNodesPerScaleSet 2: two sets, then a third).

Invariants (each check counted; each violation kept with step, node and detail):
- drains: every drain in the ledger (set by the script's admin or by a health check) keeps its
  state, reason and owner (`[user@time]`) until its owner lifts it; no drain or DOWN appears that
  neither the ledger nor the step explains;
- jobs' VMs: no node a running job holds has its VM stopped;
- names: every Slurm node maps to exactly one VM (its instance id) and every VM to one node; no VM
  runs without a Slurm node, and none runs while its node is powered down (billing for nothing);
- jobs: every submitted job (each array task) is seen COMPLETED by the end, requeues allowed;
- transitions: no node stays powering up (`#`), powering down (`%`), pending power down (`!`) or
  COMPLETING past its timeout plus a margin;
- after every power cycle: each job's probe (an srun step on every node of the job) sees `ulimit -l`
  unlimited and the scratch (read from the node's enroot drop-in) mounted from the local NVMe,
  not the OS disk.

Declared compressions: SuspendTime/SuspendTimeout/ResumeTimeout scaled by `power.time_scale`;
scale sets of 2 VMs (maxNodesPerScaleSet, Azure's limit is 100);
a health check tick runs the node's HealthCheckProgram at once (HealthCheckInterval is not scaled);
jobs are root's, named after the user who would own them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterctl.power.names import (
    computer_name_prefix,
    group_name,
    node_name,
    vm_name,
    vm_set_name,
)
from clusterctl.sandbox.vm import boot, faults, power, substitutions, vmstate

SUSPEND_S, SUSPEND_TIMEOUT_S, RESUME_TIMEOUT_S = 20, 10, 100
MARGIN_S = 60.0
POLL_S = 3.0
NODES = 4
PER_SCALE_SET = 2
"""The scale-set limit in the soak (maxNodesPerScaleSet, a declared compression of Azure's 100):
4 nodes make two scale sets, two InfiniBand fabrics, and a resize crosses into a third."""
HEALTH = "/usr/local/libexec/gpu-clusters/gpucl-health.sh"
PROBE_DIR = "/sched/gpucl-soak"
SHELL_MEMLOCK_KIB = "1024"
"""Users submit from a shell whose locked-memory limit is below slurmd's."""
PROBE = r"""#!/bin/bash
# the soak's probe, one srun task per node of a job: locked memory and where the scratch lives
conf=$(cat /etc/enroot/enroot.conf.d/*.conf 2>/dev/null)
rt=$(printf '%s\n' "$conf" | awk '$1 == "ENROOT_RUNTIME_PATH" {print $2}' | tail -n 1)
scratch=${rt%%/enroot/*}
nvme=$(lsblk -dpno NAME,MODEL | awk '/NVMe Direct Disk|NVMe Instance Storage/ {print $1}' |
  tr '\n' ,)
md=$(lsblk -npo NAME,TYPE 2>/dev/null | awk '$2 == "raid0" {print $1}' | tr '\n' ,)
slurmd=$(awk '/^Max locked memory/ {print $4}' "/proc/$(pidof -s slurmd)/limits")
fmt='node=%s job=%s restart=%s memlock=%s slurmd=%s scratch=%s target=%s source=%s fstype=%s'
fmt="$fmt root=%s %s\n"
printf "$fmt" \
  "$SLURMD_NODENAME" "$SLURM_JOB_ID" "${SLURM_RESTART_COUNT:-0}" "$(ulimit -l)" "$slurmd" \
  "$scratch" \
  "$(findmnt -no TARGET --target "$scratch" | head -n 1)" \
  "$(findmnt -no SOURCE --target "$scratch" | head -n 1)" \
  "$(findmnt -no FSTYPE --target "$scratch" | head -n 1)" \
  "$(findmnt -no SOURCE / | head -n 1)" "nvme=$nvme$md" \
  > "$0.d/$SLURM_JOB_ID.$SLURMD_NODENAME.${SLURM_RESTART_COUNT:-0}.$(date +%s%N)"
"""
TERMINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE")


def _loaded(workdir: Path) -> vmstate.VmState:
    """The sandbox's state; the soak only runs on a booted sandbox, so none is an error."""
    state = vmstate.load(workdir)
    if state is None:
        raise RuntimeError(f"no VM sandbox in {workdir}")
    return state


@dataclass
class Violation:
    step: str
    invariant: str
    node: str
    detail: str


@dataclass
class Drain:
    owner: str
    """Who set it and may lift it: "admin" or "health"."""
    reason: str
    stamp: str
    """Slurm's `[user@time]` of the drain: the same user and time until the owner lifts it."""
    liftable: bool = False
    """Its owner may lift it now (a health check that runs on its own): lifted is no violation,
    any other change still is."""


@dataclass
class Job:
    user: str
    kind: str
    submitted: float
    state: str = "SUBMITTED"
    restarts: int = 0
    completed: bool = False
    seen: tuple = ()


@dataclass
class Result:
    steps: list[tuple[str, str, float]] = field(default_factory=list)
    """(step, "ok" | "not run: why" | "failed: why", seconds)."""
    checks: dict[str, int] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    jobs: dict[str, Job] = field(default_factory=dict)
    node_s_powered: float = 0.0
    node_s_busy: float = 0.0
    latencies: list[tuple[str, float]] = field(default_factory=list)
    power_ups: int = 0
    probes: int = 0
    wall_s: float = 0.0
    boot_s: float = 0.0
    first_boots: list[tuple[str, str, float]] = field(default_factory=list)
    """(node, where its pyxis and NHC came from, e.g. "pyxis built, NHC cached", its first
    boot's CPU seconds): the day-1 nodes, which may boot before the scheduler publishes, and the
    resize's."""

    @property
    def lost(self) -> list[str]:
        return [k for k, j in self.jobs.items() if not j.completed]

    def table(self) -> str:
        out = ["soak: a month in a day (1 scheduler + 4 GPU nodes, time-scaled)", ""]
        out.append(f"{'step':<28} {'result':<44} {'s':>6}")
        for name, verdict, secs in self.steps:
            out.append(f"{name:<28} {verdict[:44]:<44} {secs:6.0f}")
        ran = sum(1 for _n, v, _s in self.steps if v == "ok")
        out += ["", f"steps run {ran}, not run {len(self.steps) - ran}"]
        out.append(f"{'invariant':<28} {'checks':>7} {'violations':>11}")
        for inv in sorted(self.checks):
            bad = sum(1 for v in self.violations if v.invariant == inv)
            out.append(f"{inv:<28} {self.checks[inv]:7d} {bad:11d}")
        out.append(f"{'total':<28} {sum(self.checks.values()):7d} {len(self.violations):11d}")
        for v in self.violations:
            out.append(f"  VIOLATION [{v.step}] {v.invariant} {v.node}: {v.detail}")
        done = sum(1 for j in self.jobs.values() if j.completed)
        requeued = sum(1 for j in self.jobs.values() if j.restarts and j.completed)
        out.append(
            f"jobs submitted {len(self.jobs)}, completed {done}, lost {len(self.lost)} "
            f"(requeued and completed {requeued})"
        )
        for key in self.lost:
            out.append(f"  LOST {key} ({self.jobs[key].kind}, last {self.jobs[key].state})")
        idle = 1 - self.node_s_busy / self.node_s_powered if self.node_s_powered else 0.0
        out.append(
            f"node-hours powered {self.node_s_powered / 3600:.3f}, with a job "
            f"{self.node_s_busy / 3600:.3f}, idle fraction {idle:.2f}"
        )
        lat = [s for _n, s in self.latencies]
        if lat:
            out.append(
                f"resume -> job start: {len(lat)} power-ups, median {statistics.median(lat):.1f} s,"
                f" max {max(lat):.1f} s (poll {POLL_S:.0f} s)"
            )
        out.append(f"power-ups seen {self.power_ups}; job probes checked {self.probes}")
        for how in sorted({h for _n, h, _c in self.first_boots}):
            cpu = [c for _n, h, c in self.first_boots if h == how]
            out.append(
                f"first boot of a GPU node ({how}): median {statistics.median(cpu):.1f} CPU-s "
                f"({len(cpu)} nodes)"
            )
        out.append(f"wall time {self.wall_s:.0f} s (boot {self.boot_s:.0f} s)")
        return "\n".join(out)


def expand(hostlist: str) -> list[str]:
    """Slurm's hostlist (`gpu-pg0-[1-2,4],other-3`) as names."""
    names: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", hostlist or ""):
        m = re.fullmatch(r"(.*)\[(.*)\](.*)", part)
        if not m:
            if part and part != "(null)":
                names.append(part)
            continue
        for rng in m.group(2).split(","):
            lo, _, hi = rng.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                names.append(f"{m.group(1)}{str(i).zfill(len(lo))}{m.group(3)}")
    return names


def node_order(name: str) -> tuple[str, int]:
    group, _, index = name.rpartition("-")
    return group, int(index)


def flags(state: str) -> set[str]:
    """Transitional marks of a sinfo %T state: '#', '%', '!', 'completing'."""
    got = {c for c in "#%!" if c in state}
    if "completing" in state:
        got.add("completing")
    return got


class Soak:
    def __init__(self, workdir: Path, specs: list[boot.NodeSpec], log: Callable = print):
        self.workdir = workdir
        self.log = log
        self.specs = specs
        self.sched = next(s.name for s in specs if s.role == "scheduler")
        gpus = [s for s in specs if s.role == "gpu"]
        self.cluster = self.sched.removesuffix("-scheduler")
        self.vms = {node_name(self.cluster, s.vm_name): s.vm_name for s in gpus}
        self.hosts = {node_name(self.cluster, s.vm_name): s.name for s in gpus}
        self.nodes = sorted(self.vms, key=node_order)
        self.result = Result()
        self.step = "boot"
        self.allowed: tuple[str, ...] = ()
        """Reason prefixes the current step may set on a node outside the ledger."""
        self.ledger: dict[str, Drain] = {}
        self.lock = threading.RLock()
        self.seen: dict[str, Any] = {}
        """The last poll: nodes {name: (state, reason)}, jobs, vm power, time."""
        self.first: dict[tuple[str, str], float] = {}
        self.up_since: dict[str, float] = {}
        self.stop = threading.Event()
        self.poller: threading.Thread | None = None
        self.probed: set[str] = set()
        self.flagged: set[tuple] = set()

    # -- plumbing ------------------------------------------------------------------------------

    @classmethod
    def boot(cls, workdir: Path, stack: str = "azure-h100", log: Callable = print) -> Soak:
        t0 = time.monotonic()
        plan = Path(tempfile.mkdtemp(prefix="gpucl-soak-plan-"))
        subprocess.run(
            [sys.executable, "-m", "clusterctl", "plan", "-s", stack, "--out", str(plan),
             "--set", f"partitions[0].nodes={NODES}",
             "--set", f"partitions[0].maxNodesPerScaleSet={PER_SCALE_SET}"],
            check=True, capture_output=True,
        )  # fmt: skip
        specs = boot.cluster_from_plan(plan)
        gpus = [s for s in specs if s.role == "gpu"]
        soak = cls(workdir.resolve(), specs, log)
        try:
            reports = boot.up(specs, soak.workdir, timeout=900, log=lambda _m: None)
            bad = {n: r for n, r in reports.items() if r.get("cloud_init") != "done"}
            if bad:
                raise RuntimeError(f"soak: nodes did not boot: {bad}")
            soak.wait("every GPU node idle", soak.states, lambda s: all(
                s.get(n, ("", ""))[0] == "idle" for n in soak.nodes), 300)  # fmt: skip
            for spec in gpus:
                soak.first_boot(spec.name)
            power.time_scale(soak.workdir, soak.sched, SUSPEND_S, SUSPEND_TIMEOUT_S,
                             RESUME_TIMEOUT_S)  # fmt: skip
            soak.put_probe()
        except BaseException:
            boot.down(soak.workdir, log=lambda _m: None)
            raise
        soak.result.boot_s = time.monotonic() - t0
        return soak

    def put_probe(self) -> None:
        init = str(_loaded(self.workdir).nodes[self.sched]["init"])
        cmd = f"mkdir -p {PROBE_DIR}/probe.sh.d {PROBE_DIR}/out && cat > {PROBE_DIR}/probe.sh"
        put = subprocess.run(["nsenter", "-t", init, "-a", "sh", "-c", cmd], input=PROBE,
                             text=True, capture_output=True)  # fmt: skip
        if put.returncode != 0:
            raise RuntimeError(f"soak: probe not written: {put.stderr}")

    def down(self) -> None:
        self.stop.set()
        if self.poller:
            self.poller.join(timeout=30)
        keep = self.workdir / "logs" / "soak"
        keep.mkdir(parents=True, exist_ok=True)
        for node in [self.sched, *self.hosts.values()]:
            with contextlib.suppress(Exception):  # logs are best effort
                got = self.sh("tail -n 300 /var/log/slurm/*.log; journalctl -b --no-pager | "
                              "tail -n 400", node, timeout=60)  # fmt: skip
                (keep / f"{node}.txt").write_text(got.stdout)
        boot.down(self.workdir, log=lambda _m: None)

    def first_boot(self, host: str) -> None:
        """Record a GPU node's first-boot CPU seconds (its container's cgroup, read before any
        power cycle) and whether its pyxis and NHC were built there or came from the cache."""
        sid = _loaded(self.workdir).sid
        usage = Path(f"/sys/fs/cgroup/cpuacct/gpucl-{sid}/{host}/cpuacct.usage")
        log = self.sh("grep -h '^gpucl-build-cache:' /var/log/cloud-init-output.log", host).stdout
        how = ", ".join(
            f"{name} built" if f": {key} built here" in log
            else f"{name} cached" if f": {key} installed from" in log
            else f"{name} ?"
            for key, name in (("pyxis", "pyxis"), ("nhc", "NHC"))
        )  # fmt: skip
        with contextlib.suppress(OSError, ValueError):
            self.result.first_boots.append((host, how, int(usage.read_text()) / 1e9))
        self.log(f"soak: {host} first boot: {how}")

    def sh(self, cmd: str, node: str | None = None, timeout: float = 120):
        return boot.run(self.workdir, node or self.sched, ["sh", "-c", cmd], timeout=timeout)

    def states(self) -> dict[str, tuple[str, str]]:
        got = self.sh("sinfo -h -N -o '%N|%T|%E'", timeout=30)
        out = {}
        for line in got.stdout.splitlines():
            name, _, rest = line.partition("|")
            st, _, reason = rest.partition("|")
            out[name] = (st, reason)
        return out

    def state(self, node: str) -> str:
        return self.states().get(node, ("?", ""))[0]

    def job(self, job_id: str) -> dict[str, str]:
        return dict(re.findall(r"(\w+)=(\S*)", self.sh(f"scontrol -o show job {job_id}").stdout))

    def wait(self, what: str, probe: Callable, ok: Callable, timeout: float):
        deadline = time.monotonic() + timeout
        while True:
            try:
                seen = probe()
            except (subprocess.SubprocessError, OSError, boot.BootError, KeyError) as exc:
                seen = f"error: {exc}"
            if (not isinstance(seen, str) or not seen.startswith("error")) and ok(seen):
                return seen
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not within {timeout:.0f} s; last seen {seen!r}")
            time.sleep(2)

    def vm_power(self) -> dict[str, str]:
        state = _loaded(self.workdir)
        out = {}
        for slurm, vm in self.vms.items():
            node = next((v for v in state.nodes.values() if v.get("vm_name") == vm), None)
            out[slurm] = "running" if node and power.running(node) else "stopped"
        return out

    def sbatch(self, user: str, kind: str, args: str, sleep: int, array: str = "") -> str:
        probe = f"srun --ntasks-per-node=1 bash {PROBE_DIR}/probe.sh || exit 1"
        script = f"#!/bin/bash\n{probe}\nsleep {sleep}\n"
        opts = f"--parsable -J {user}-{kind} --time=10 -o {PROBE_DIR}/out/%j.out {args}"
        if array:
            opts += f" --array={array}"
        got = self.sh(f"ulimit -S -l {SHELL_MEMLOCK_KIB} && sbatch {opts} <<'EOF'\n{script}EOF")
        if got.returncode != 0:
            raise RuntimeError(f"sbatch {opts}: {got.stderr.strip()}")
        job = got.stdout.strip().split(";")[0]
        with self.lock:
            keys = [f"{job}_{i[1:]}" for i in expand(f"x[{array}]")] if array else [job]
            for key in keys:
                self.result.jobs[key] = Job(user, kind, time.monotonic())
        self.log(f"soak: {user} submitted {kind} {job} ({args} {array})")
        return job

    def fault(self, node: str, kind: str) -> None:
        faults.inject(self.workdir, self.hosts[node], kind)

    def violate(self, invariant: str, node: str, detail: str, once: tuple = ()) -> None:
        if once:
            if once in self.flagged:
                return
            self.flagged.add(once)
        v = Violation(self.step, invariant, node, detail)
        self.result.violations.append(v)
        self.log(f"soak: VIOLATION [{v.step}] {invariant} {node}: {detail}")

    def count(self, invariant: str, n: int = 1) -> None:
        with self.lock:
            self.result.checks[invariant] = self.result.checks.get(invariant, 0) + n

    # -- the poll and the invariants -----------------------------------------------------------

    def poll(self) -> dict | None:
        """One sample: nodes, jobs, VMs; accounting and the per-poll invariants."""
        cmd = ("sinfo -h -N -o '%N|%T|%E'; echo @@; scontrol -o show job; echo @@; "
               "scontrol -o show node")  # fmt: skip
        try:
            got = self.sh(cmd, timeout=30)
        except (subprocess.SubprocessError, OSError, boot.BootError, KeyError):
            with self.lock:  # the scheduler's VM is being re-created (see below)
                self.first.clear()
            return None
        parts = got.stdout.split("@@\n")
        if got.returncode != 0 or len(parts) != 3 or not parts[0].strip():
            # The scheduler is down (re-created) or restarting. A transition's timeout runs in
            # slurmctld, and a new one times it from its own start: so do the clocks here.
            with self.lock:
                self.first.clear()
            return None
        now = time.monotonic()
        nodes = {}
        for line in parts[0].splitlines():
            name, _, rest = line.partition("|")
            st, _, reason = rest.partition("|")
            nodes[name] = (st, reason)
        stamps = {}
        for line in parts[2].splitlines():
            m = re.match(r"NodeName=(\S+)", line)
            r = re.search(r" Reason=(.*) \[(\S+@\S+)\]", line)
            if m:
                stamps[m.group(1)] = r.group(2) if r else ""
        jobs = [dict(re.findall(r"(\w+)=(\S*)", line)) for line in parts[1].splitlines()]
        vms = self.vm_power()
        with self.lock:
            last = self.seen.get("t")
            self.seen = {"t": now, "nodes": nodes, "stamps": stamps, "jobs": jobs, "vms": vms}
            self._account(now, last, nodes, jobs, vms)
            self._jobs_vms(nodes, jobs, vms)
            self._transitions(now, nodes)
            self._billing(now, nodes, vms)
        return self.seen

    def _busy(self, jobs: list[dict]) -> set[str]:
        busy: set[str] = set()
        for j in jobs:
            if j.get("JobState") in ("RUNNING", "COMPLETING"):
                busy.update(expand(j.get("NodeList", "")))
        return busy

    def _account(self, now, last, nodes, jobs, vms) -> None:
        busy = self._busy(jobs)
        if last is not None:
            dt = min(now - last, 30.0)
            up = {n for n, p in vms.items() if p == "running"}
            self.result.node_s_powered += dt * len(up)
            self.result.node_s_busy += dt * len(busy & up)
        for j in jobs:
            key = j.get("JobId", "")
            if j.get("ArrayJobId") and j.get("ArrayTaskId", "").isdigit():
                key = f"{j['ArrayJobId']}_{j['ArrayTaskId']}"
            job = self.result.jobs.get(key)
            if job is None:
                continue
            now_is = (j.get("JobState", "?"), j.get("Reason", ""), j.get("NodeList", ""))
            if now_is != job.seen:  # each job's history, for a failure's post-mortem
                job.seen = now_is
                self.log(f"soak: job {key} {' '.join(now_is)} begin {j.get('BeginTime')}")
            job.state = j.get("JobState", "?")
            job.restarts = max(job.restarts, int(j.get("Restarts", "0") or 0))
            if job.state == "COMPLETED":
                job.completed = True
        for node, (st, _r) in nodes.items():
            if "#" in st and node not in self.up_since:
                self.up_since[node] = now
                self.result.power_ups += 1
            elif node in self.up_since and "#" not in st:
                if node in busy and vms.get(node) == "running":
                    self.result.latencies.append((node, now - self.up_since.pop(node)))
                elif "~" in st or "down" in st or "drain" in st:
                    self.up_since.pop(node)  # a failed or an admin's power-up: no job started

    def _jobs_vms(self, nodes, jobs, vms) -> None:
        for j in jobs:
            if j.get("JobState") != "RUNNING":
                continue
            for node in expand(j.get("NodeList", "")):
                self.count("job VMs kept")
                if node in vms and vms[node] != "running" and "#" not in nodes.get(node, ("",))[0]:
                    self.violate("job VMs kept", node, f"job {j.get('JobId')} "
                                 f"{j.get('JobState')} on a stopped VM; node {nodes.get(node)}",
                                 once=("vm", j.get("JobId"), node))  # fmt: skip

    def _transitions(self, now, nodes) -> None:
        limit = {"#": RESUME_TIMEOUT_S, "%": SUSPEND_TIMEOUT_S, "!": SUSPEND_TIMEOUT_S + SUSPEND_S,
                 "completing": 60}  # fmt: skip
        for node, (st, _r) in nodes.items():
            now_flags = flags(st)
            for flag in limit:
                key = (node, flag)
                if flag not in now_flags:
                    self.first.pop(key, None)
                    continue
                self.first.setdefault(key, now)
                self.count("transitions bounded")
                held = now - self.first[key]
                if held > limit[flag] + MARGIN_S:
                    self.violate("transitions bounded", node, f"{st} for {held:.0f} s "
                                 f"(limit {limit[flag]} + {MARGIN_S:.0f})",
                                 once=("tr", node, flag, self.first[key]))  # fmt: skip

    def _billing(self, now, nodes, vms) -> None:
        """A VM running while its node is powered down bills for nothing; a deallocation may
        take until SuspendTimeout (plus the margin) after Slurm marks the node powered down."""
        for node, power_state in vms.items():
            st = nodes.get(node, ("",))[0]
            key = (node, "bill")
            if not (power_state == "running" and st.endswith("~") and not flags(st)):
                self.first.pop(key, None)
                continue
            self.first.setdefault(key, now)
            self.count("names map 1:1")
            if now - self.first[key] > SUSPEND_TIMEOUT_S + MARGIN_S:
                held = now - self.first[key]
                self.violate("names map 1:1", node, f"VM runs while the node is {st} for "
                             f"{held:.0f} s", once=("bill", self.first[key]))  # fmt: skip

    def _poll_loop(self) -> None:
        while not self.stop.wait(POLL_S):
            try:
                seen = self.poll()
                if seen:
                    self.check_drains(seen)
            except Exception as exc:  # the poller outlives a bad sample
                self.log(f"soak: poll failed: {exc!r}")

    def check_drains(self, seen: dict) -> None:
        with self.lock:
            for node, (st, reason) in seen["nodes"].items():
                self.count("drains kept")
                d = self.ledger.get(node)
                drained = "drain" in st
                if d is not None:
                    stamp = seen["stamps"].get(node, "")
                    if d.liftable and not drained:
                        continue
                    if not drained or reason != d.reason or stamp != d.stamp:
                        self.violate("drains kept", node, f"{d.owner}'s drain {d.reason!r} "
                                     f"[{d.stamp}] now {st} {reason!r} [{stamp}]",
                                     once=("drain", node, d.stamp, st, reason))  # fmt: skip
                elif (drained or st.startswith(("down", "fail"))) and not any(
                    reason.startswith(p) for p in self.allowed
                ):
                    self.violate("drains kept", node, f"unexplained {st} {reason!r}",
                                     once=("unexp", node, st, reason))  # fmt: skip

    def check_step(self) -> None:
        """The invariants at the end of a step, on a fresh poll."""
        seen = self.wait("a poll", self.poll, lambda s: s is not None, 120)
        self.check_drains(seen)
        self.check_names(seen)
        self.check_probes()

    def name_map(self) -> dict | None:
        """The scheduler's name map (names.json), None when it cannot be read."""
        got = self.sh(f"cat /sched/{self.cluster}/names.json", timeout=30)
        try:
            return dict(json.loads(got.stdout)["names"]) if got.returncode == 0 else None
        except (ValueError, KeyError):
            return None

    def check_names(self, seen: dict) -> None:
        """Through the scheduler's own map: every VM that exists has one Slurm name, every
        Slurm node one VM."""
        state = _loaded(self.workdir)
        gpu_vms = {
            v["vm_name"]: v
            for v in state.nodes.values()
            if v.get("role") == "gpu" and not v.get("deleted")
        }
        names = self.name_map()
        if names is None:
            self.violate("names map 1:1", "-", "names.json cannot be read", once=("nm", "file"))
            return
        slurm = set(seen["nodes"])
        by_vm: dict[str, list[str]] = {}
        for vm in gpu_vms:
            self.count("names map 1:1")
            try:
                by_vm.setdefault(node_name(self.cluster, vm, names), []).append(vm)
            except (ValueError, LookupError) as exc:
                self.violate("names map 1:1", vm, f"no Slurm name: {exc}", once=("nm", vm))
        for name in sorted(slurm | set(by_vm)):
            self.count("names map 1:1")
            vms = by_vm.get(name, [])
            if len(vms) != 1 or name not in slurm:
                self.violate("names map 1:1", name, f"Slurm {'has' if name in slurm else 'lacks'}"
                             f" it; VMs {vms}", once=("nm", name, tuple(vms)))  # fmt: skip
                continue

    def check_probes(self) -> None:
        got = self.sh(f"cd {PROBE_DIR}/probe.sh.d && for f in *; do [ -f \"$f\" ] && "
                      "echo \"$f $(cat \"$f\")\"; done")  # fmt: skip
        for line in got.stdout.splitlines():
            name, _, text = line.partition(" ")
            if name in self.probed:
                continue
            self.probed.add(name)
            self.result.probes += 1
            f = dict(re.findall(r"(\w+)=(\S*)", text))
            node = f.get("node", "?")
            # slurmd's locked memory, not the submitting shell's lower one: unlimited on a VM
            # (LimitMEMLOCK=infinity); this host caps every process (substitution rlimits)
            self.count("memlock is slurmd's")
            slurmd = f.get("slurmd", "")
            want = "unlimited" if slurmd == "unlimited" else str(int(slurmd or 0) // 1024)
            if f.get("memlock") != want or want == SHELL_MEMLOCK_KIB:
                self.violate("memlock is slurmd's", node, f"job {f.get('job')}: {text}")
            self.count("scratch on NVMe")
            nvme = [d for d in f.get("nvme", "").split(",") if d]
            ok = (
                f.get("scratch")
                and f.get("target") == f.get("scratch")
                and f.get("source") != f.get("root")
                and (f.get("source") in nvme or "/md" in f.get("source", ""))
            )
            if not ok:
                self.violate("scratch on NVMe", node, f"job {f.get('job')}: {text}")

    # -- the month -----------------------------------------------------------------------------

    def play(self) -> Result:
        t0 = time.monotonic()
        self.poller = threading.Thread(target=self._poll_loop, daemon=True)
        self.poller.start()
        try:
            for name, fn in MONTH:
                self._run_step(name, fn)
            self._final()
        finally:
            self.stop.set()
            self.poller.join(timeout=30)
            self.result.wall_s = time.monotonic() - t0 + self.result.boot_s
        return self.result

    def _run_step(self, name: str, fn: Callable) -> None:
        self.step, self.allowed = name, ALLOWED.get(name, ())
        t = time.monotonic()
        self.log(f"soak: step {name}")
        if isinstance(fn, str):
            self.result.steps.append((name, fn, 0.0))
            return
        try:
            fn(self)
            verdict = "ok"
        except Exception as exc:  # a failed step is reported; the month goes on
            verdict = f"failed: {exc}"
            self.violate("steps complete", "-", f"{name}: {exc}")
            self.log(f"soak: step {name} failed: {exc}")
        self.count("steps complete")
        self.check_step()
        self.result.steps.append((name, verdict, time.monotonic() - t))

    def _final(self) -> None:
        self.step, self.allowed = "end", ()
        t = time.monotonic()
        try:
            self.wait("every job ended", lambda: self.result.jobs,
                      lambda js: all(j.completed or j.state in TERMINAL for j in js.values()),
                      600)  # fmt: skip
            self.settle()
        except TimeoutError as exc:
            self.violate("steps complete", "-", f"end: {exc}")
        self.check_step()
        for key in self.result.lost:
            self.count("jobs complete")
            self.violate("jobs complete", "-", f"job {key} ({self.result.jobs[key].kind}) "
                         f"last seen {self.result.jobs[key].state}")  # fmt: skip
        self.count("jobs complete", len(self.result.jobs) - len(self.result.lost))
        self.result.steps.append(("end: all idle, powered down", "ok", time.monotonic() - t))

    # step helpers

    def until(self, what: str, ok: Callable[[dict], bool], timeout: float) -> dict:
        return self.wait(what, lambda: self.poll() or "error: no poll", ok, timeout)

    def done(self, *jobs: str, timeout: float = 400) -> None:
        keys = [k for k in self.result.jobs if k.split("_")[0] in jobs]
        self.until(f"jobs {', '.join(jobs)} completed", lambda _s: all(
            self.result.jobs[k].completed for k in keys), timeout)  # fmt: skip

    def settle(self, nodes: list[str] | None = None, timeout: float = 240) -> None:
        """Wait until `nodes` (default: all) are powered down, nothing transitional."""
        names = nodes or self.nodes
        self.until(f"{names} powered down", lambda s: all(
            s["nodes"][n][0].endswith("~") and not flags(s["nodes"][n][0])
            and s["vms"][n] == "stopped" for n in names), timeout)  # fmt: skip

    def running(self, job: str, timeout: float = RESUME_TIMEOUT_S + 60) -> str:
        j = self.wait(f"job {job} running", lambda: self.job(job),
                      lambda j: j.get("JobState") == "RUNNING", timeout)  # fmt: skip
        return j["NodeList"]

    def up(self, node: str) -> None:
        """The admin's `State=POWER_UP` (a drained node is not started for jobs)."""
        self.sh(f"scontrol update NodeName={node} State=POWER_UP")
        self.until(f"{node} powered up", lambda s: not s["nodes"][node][0].endswith("~")
                   and not flags(s["nodes"][node][0]) and s["vms"][node] == "running",
                   RESUME_TIMEOUT_S + 30)  # fmt: skip

    def drain(self, node: str, owner: str, reason: str) -> None:
        if owner == "admin":
            got = self.sh(f"scontrol update NodeName={node} State=DRAIN Reason='{reason}'")
            if got.returncode != 0:
                raise RuntimeError(got.stderr)
        seen = self.until(f"{node} drained", lambda s: "drain" in s["nodes"][node][0], 60)
        with self.lock:
            self.ledger[node] = Drain(owner, seen["nodes"][node][1], seen["stamps"].get(node, ""))
        self.log(f"soak: ledger + {node} {self.ledger[node]}")

    def lift(self, node: str) -> None:
        with self.lock:
            self.ledger.pop(node)

    def health_tick(self, node: str) -> None:
        self.sh(f"SLURMD_NODENAME={node} {HEALTH}", self.hosts[node], timeout=120)


# -- the steps ---------------------------------------------------------------------------------


def week_of_jobs(s: Soak) -> None:
    # a job larger than one scale set (one fabric) is refused at submission, not left pending;
    # by a user: slurm.conf(5) exempts root and SlurmUser from partition limits
    big = s.sh(f"cd /tmp && runuser -u azureuser -- sbatch -N{PER_SCALE_SET + 1} --wrap true")
    if big.returncode == 0 or "Node count specification invalid" not in big.stderr:
        raise RuntimeError(f"a {PER_SCALE_SET + 1}-node job was not refused: {big.stdout}"
                           f"{big.stderr}")  # fmt: skip
    a = s.sbatch("alice", "array", "-N1", 5, array="1-4")
    b = s.sbatch("bob", "2-node", "-N2", 10)
    c = s.sbatch("carol", "long", "-N1", 40)
    s.done(a, b, c)


def idle_gap(s: Soak) -> None:
    s.settle()


def maintenance_drain(s: Soak) -> None:
    """The admin drains a powered-down node for maintenance; users' jobs power up the others."""
    s.drain(s.nodes[3], "admin", "admin: maintenance, firmware update")
    d1 = s.sbatch("dave", "2-node", "-N2", 5)
    d2 = s.sbatch("dave", "2-node", "-N2", 5)
    d3 = s.sbatch("erin", "array", "-N1", 3, array="1-3")
    s.done(d1, d2, d3)
    st = s.state(s.nodes[3])
    if st != "drained~":
        raise RuntimeError(f"{s.nodes[3]} is {st}, not drained~ (kept down for maintenance)")


def health_fault(s: Soak) -> None:
    """A GPU falls off a node running a job: the health check drains it; the job ends; the node
    powers down with its drain and up with it; once healthy, the check lifts its own drain."""
    node = s.nodes[2]
    job = s.sbatch("frank", "long", f"-N1 -w {node}", 15)
    s.running(job)
    s.fault(node, "fail-health")
    s.health_tick(node)
    s.drain(node, "health", "")
    if "7 of 8 GPUs" not in s.ledger[node].reason:
        raise RuntimeError(f"health drain reason {s.ledger[node].reason!r}")
    s.done(job)
    s.settle([node])  # powered down, drained (the ledger checks the drain at every poll)
    s.ledger[node].liftable = True  # slurmd runs its health check at start: the owner, on its own
    s.up(node)
    st, reason = s.states()[node]
    if "drain" in st:
        if reason != s.ledger[node].reason:
            raise RuntimeError(f"{node} powered up with {reason!r}, not its health drain")
        s.fault(node, "clear")
        s.health_tick(node)
    else:
        s.fault(node, "clear")
    s.until(f"{node} lifted by its health check", lambda x: "drain" not in x["nodes"][node][0], 60)
    journal = s.sh("journalctl -b -t gpucl-health --no-pager", s.hosts[node]).stdout
    s.lift(node)
    if "resumed" not in journal:  # lifted, but not by its owner
        s.violate("drains kept", node, f"health drain lifted by someone else: {journal[-300:]!r}")


def spot_eviction(s: Soak) -> None:
    job = s.sbatch("grace", "long", "-N1", 40)
    node = s.running(job)
    s.fault(node, "preempt")
    s.wait(f"job {job} requeued", lambda: s.job(job),
           lambda j: int(j.get("Restarts", "0") or 0) >= 1, 90)  # fmt: skip
    s.until(f"{node} evicted and powered down", lambda x: x["vms"][node] == "stopped"
            and x["nodes"][node][0] == "idle~", 150)  # fmt: skip
    s.fault(node, "clear")
    s.done(job, timeout=RESUME_TIMEOUT_S + 200)


def failed_resume(s: Soak) -> None:
    """Every idle powered-down node's VM fails to start until Slurm has tried one: that node is
    DOWN with the cause, the job runs elsewhere, and the return service gives the node back."""
    s.settle([n for n in s.nodes if n not in s.ledger])
    pool = [n for n in s.nodes if n not in s.ledger]
    for n in pool:
        s.fault(n, "start-fails")
    job = s.sbatch("heidi", "short", "-N1", 5)
    seen = s.until("a node DOWN for its failed start", lambda x: any(
        x["nodes"][n][1].startswith("gpucl: power: start failed") for n in pool), 120)  # fmt: skip
    bad = [n for n in pool if seen["nodes"][n][1].startswith("gpucl: power: start failed")]
    for n in pool:
        s.fault(n, "clear")
    s.done(job, timeout=RESUME_TIMEOUT_S + 120)  # requeued jobs wait out their credential
    # the scheduler's gpucl-power-return.timer (scaled: every 10 s) gives them back after its
    # hold, counted from ResumeTimeout: until then Slurm holds a node whose start failed as
    # powering up, and its ResumeFailProgram then renews the reason
    s.until(f"{bad} returned by the timer", lambda x: all(
        x["nodes"][n][0] == "idle~" and x["vms"][n] == "stopped" for n in bad),
        RESUME_TIMEOUT_S + power.return_after_s() + 60)  # fmt: skip
    log = s.sh("cat /var/log/slurm/gpucl-power.log").stdout
    for n in bad:
        if f"{n}: returned to the powered-down pool" not in log:
            raise RuntimeError(f"{n} idle~ but not returned by gpucl-power return")
    s.log(f"soak: {bad} failed to start, returned by gpucl-power-return")


def node_replace(s: Soak) -> None:
    """A node with a job replaced (--force): its job is requeued before its VM is reimaged and
    runs on it again once it is back; other users' jobs run meanwhile."""
    node = s.nodes[1]
    pinned = s.sbatch("ivan", "pinned", f"-N1 -w {node}", 30)
    s.running(pinned)
    argv = [sys.executable, "-m", "clusterctl", "node", "replace", node, "--force",
            "--sandbox-dir", str(s.workdir), "--timeout", "8"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    s.until(f"{node} drained for replace", lambda x: "drain" in x["nodes"][node][0], 90)
    job = s.sbatch("ivan", "array", "-N1", 5, array="1-3")  # on the other nodes meanwhile
    out, _ = proc.communicate(timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"node replace exited {proc.returncode}: {out[-600:]}")
    if f"requeued {pinned}" not in out:
        raise RuntimeError(f"node replace did not requeue {pinned}: {out[-600:]}")
    s.done(job, pinned)


def reboot(s: Soak) -> None:
    node = s.nodes[0]
    # not while it powers up or down: its VM may be stopping (a reboot needs a running one)
    seen = s.until(
        f"{node} settled", lambda x: not flags(x["nodes"][node][0]), SUSPEND_TIMEOUT_S + 60
    )
    if seen["nodes"][node][0].endswith("~"):
        s.up(node)
    boot.reboot(s.workdir, s.hosts[node], log=lambda _m: None)
    s.until(f"{node} back after its reboot", lambda x: "*" not in x["nodes"][node][0]
            and not x["nodes"][node][0].startswith(("down", "drain")), 120)  # fmt: skip
    job = s.sbatch("judy", "short", f"-N1 -w {node}", 3)
    s.done(job)


def scheduler_recreate(s: Soak) -> None:
    """The scheduler's VM re-created on a new OS disk with its data disk: a running job, a job
    not yet begun and the admin's drain all survive."""
    run = s.sbatch("ken", "long", "-N1", 60)
    s.running(run)

    # running means in its sleep: its probe step (srun) finished. A step still being created
    # when slurmctld goes fails the job (srun cannot reach the controller), a race under load
    # that says nothing about the re-create (seen: the job FAILED, NonZeroExitCode; its script
    # exits non-zero only when that srun fails).
    def probed() -> bool:
        files = s.sh(f"ls {PROBE_DIR}/probe.sh.d/").stdout.split()
        steps = s.sh(f"squeue -h -s -j {run} -o %i").stdout.split()
        written = any(f.startswith(f"{run}.") for f in files)
        return written and not any(re.fullmatch(rf"{run}\.\d+", st) for st in steps)

    s.wait(f"job {run}'s probe step done", probed, bool, 120)
    later = s.sbatch("ken", "later", "-N1 --begin=now+60", 3)
    with power.locked(s.workdir) as state:  # power.act serves GPU VMs only
        power.reimage(state, s.sched)
    s.wait("the new scheduler's cloud-init", lambda: s.sh("cloud-init status --wait",
           timeout=600).stdout, lambda o: "done" in o, 600)  # fmt: skip
    s.wait("slurmctld answering", lambda: s.sh("scontrol ping").stdout, lambda o: "UP" in o, 180)
    power.time_scale(s.workdir, s.sched, SUSPEND_S, SUSPEND_TIMEOUT_S, RESUME_TIMEOUT_S)
    if s.sh(f"test -f {PROBE_DIR}/probe.sh").returncode != 0:
        s.log(f"soak: {PROBE_DIR} did not survive the scheduler's re-create; written again")
        s.put_probe()
    s.done(run, later, timeout=300)


def resize(s: Soak, nodes: int, drain_only: bool = False) -> str:
    """`pulumi up` with `nodes` in the soak's stack: the scheduler's Run Command as Azure runs
    it (a root bash script): the drain-only copy Pulumi runs before it changes a capacity, or
    the config sync after (its slurm.conf with the node-size substitution)."""
    from clusterctl.render.slurm_conf import render_config_sync
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec(
        "azure-h100",
        [f"partitions[0].nodes={nodes}", f"partitions[0].maxNodesPerScaleSet={PER_SCALE_SET}"],
    )
    text = render_config_sync(spec, "azure-h100", drain_only=drain_only)
    root = Path(_loaded(s.workdir).nodes[s.sched]["root"])
    (root / "root/slurm-config-sync.sh").write_text(
        text if drain_only else substitutions.rewrite_config_sync(text)
    )
    got = s.sh("bash /root/slurm-config-sync.sh", timeout=600)
    if got.returncode != 0:
        raise RuntimeError(f"config sync to {nodes} nodes: {got.stdout[-400:]}{got.stderr[-400:]}")
    if not drain_only:  # the sync wrote the rendered slurm.conf: its power times in minutes
        power.time_scale(s.workdir, s.sched, SUSPEND_S, SUSPEND_TIMEOUT_S, RESUME_TIMEOUT_S)
    return got.stdout


def resize_across_scale_sets(s: Soak) -> None:
    """4 -> 5 nodes opens a third scale set (fill-first: the two full sets are not touched),
    its VM boots and takes its name from the map; one job never spans two fabrics: a 2-node job
    gets both nodes in one scale set, a 3-node job (more than any set holds) never starts; then
    5 -> 4: the drain-only Run Command drains the new node and deletes exactly its VM, the
    config sync takes it out of slurm.conf and the map frees its name."""
    before = dict(s.vms)
    resize(s, NODES + 1)
    group = group_name("gpu", NODES // PER_SCALE_SET)
    vmss = vm_set_name(s.cluster, group)
    new = dataclasses.replace(
        next(x for x in s.specs if x.role == "gpu"),
        name=f"{computer_name_prefix(group)}000000",
        vm_name=vm_name(vmss, 0),
        scale_set=vmss,
    )
    report = boot.add_node(s.workdir, new, log=lambda _m: None)
    if report.get("cloud_init") != "done" or report.get("errors"):
        raise RuntimeError(f"the new scale set's VM did not boot: {report}")
    s.first_boot(new.name)
    name = node_name(s.cluster, new.vm_name, s.name_map())
    with s.lock:
        s.vms[name], s.hosts[name] = new.vm_name, new.name
        s.nodes = sorted(s.vms, key=node_order)
    job = s.sbatch("dave", "2-node", "-N2", 5)
    spread = expand(s.running(job))
    if len({n.rpartition("-")[0] for n in spread}) != 1:
        raise RuntimeError(f"a 2-node job spans scale sets: {spread}")
    s.done(job)
    wide = s.sh("sbatch --parsable -J wide -N3 --time=1 --wrap true")
    if wide.returncode == 0:  # accepted: it must never start; the soak cancels it
        jid = wide.stdout.strip()
        time.sleep(20)
        got = s.job(jid)
        s.sh(f"scancel {jid}")
        if got.get("JobState") != "PENDING":
            raise RuntimeError(f"a 3-node job left PENDING over 2-node fabrics: {got}")
        s.log(f"soak: a 3-node job stays PENDING ({got.get('Reason')}): no fabric holds it")
    else:
        s.log(f"soak: a 3-node job is refused: {wide.stderr.strip()}")
    s.settle([name])
    out = resize(s, NODES, drain_only=True)
    if f"deleted the VMs of {name}" not in out:
        raise RuntimeError(f"the drain-only Run Command did not delete {name}'s VM: {out[-400:]}")
    resize(s, NODES)
    with s.lock:
        s.vms.pop(name), s.hosts.pop(name)
        s.nodes = sorted(s.vms, key=node_order)
    if s.vms != before:
        raise RuntimeError(f"the VMs of the other nodes changed: {before} -> {s.vms}")
    s.sh("systemctl start gpucl-names.service", timeout=180)
    if vmss in (s.name_map() or {}):
        raise RuntimeError(f"names.json still names a VM of {vmss}")


def maintenance_lifted(s: Soak) -> None:
    node = s.nodes[3]
    s.up(node)
    st, reason = s.states()[node]
    if st != "drained" or reason != s.ledger[node].reason:
        raise RuntimeError(f"{node} after power-up: {st} {reason!r}")
    s.lift(node)
    s.sh(f"scontrol update NodeName={node} State=RESUME")
    job = s.sbatch("admin", "check", f"-N1 -w {node}", 3)
    s.done(job)


MONTH: list[tuple[str, Callable[[Soak], None]]] = [
    ("week of jobs", week_of_jobs),
    ("idle gap", idle_gap),
    ("maintenance drain", maintenance_drain),
    ("health fault", health_fault),
    ("spot eviction", spot_eviction),
    ("failed resume", failed_resume),
    ("node replace", node_replace),
    ("reboot", reboot),
    ("scheduler re-create", scheduler_recreate),
    ("maintenance lifted", maintenance_lifted),
    ("resize across scale sets", resize_across_scale_sets),
    ("idle gap (weekend)", idle_gap),
]
ALLOWED = {
    "health fault": ("gpucl: ",),
    "spot eviction": ("gpucl: spot",),
    "failed resume": ("gpucl: power:",),
    "node replace": ("gpucl: replace",),
    "resize across scale sets": ("gpucl: resize",),
}
"""Drains and DOWNs a step sets by design outside the ledger (spot, power, replace: each lifted
by the product itself, which the next steps' checks hold it to)."""


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m tests.e2e.vm.soak")
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--json", type=Path, help="write the result here too")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    soak = Soak.boot(
        args.workdir, log=lambda m: print(f"{time.monotonic() - t0:7.1f} {m}", flush=True)
    )
    try:
        result = soak.play()
    finally:
        soak.down()
    print(result.table())
    if args.json:
        args.json.write_text(json.dumps(result, default=lambda o: o.__dict__, indent=1))
    return 0 if not result.violations and not result.lost else 1


if __name__ == "__main__":
    sys.exit(main())
