"""The power program at 512-1,000 nodes against Azure's documented request limits.

The real `PowerProgram` and `AzureBackend` (clusterctl/power) drive a stand-in for
azure-mgmt-compute's client on a virtual clock: every program runs in its own thread, one at a
time, and time passes only when one sleeps (a discrete-event simulation: seconds of wall time for
hours of cluster time). The stand-in enforces, with 429 and a Retry-After header:

- reads (GET instance view, GET the VMs of a scale set): a token bucket per subscription of 250,
  refilled at 25 a second (Microsoft Learn, "Understand how Azure Resource Manager throttles
  requests", azure-resource-manager/management/request-limits-and-throttling: the regional token
  bucket limits since 2024, subscription reads 250 / 25 per s, writes 200 / 10 per s);
- writes: that page's subscription bucket of 200 refilled at 10 a second, and per resource (a
  scale set for a scale-set start/deallocate, a VM for a single-VM call) Compute's bucket of 12
  refilled at 4 a minute (Microsoft Learn, "Compute throttling limits",
  virtual-machines/compute-throttling-limits: per-resource token buckets, its worked example of
  a 12-token bucket refilled with 4 a minute);
- provisioning: a started VM runs after PROVISION_S (uniform; ND VMs can take up to 20 minutes,
  FACTS section 4); a deallocated one stops after DEALLOCATE_S;
- failures injected per scenario: a window of throttled reads, a VM whose deallocate is refused.

slurmctld's side: ResumeTimeout and SuspendTimeout are read from the slurm.conf that
`clusterctl plan` renders for the stack, as is the shortest interval between two power programs
(SlurmctldParameters power_save_min_interval, never under power_save_interval's default 10 s:
SchedMD src/slurmctld/power_save.c). A program still running at its timeout is counted as
killed (its later work never happens). `gpucl-power return` runs every 5 minutes, as the
scheduler's timer does.

Printed per scenario: API calls made, 429 answers, when the first start was accepted, when the
last node ran, nodes left billing while Slurm has them DOWN at the end, and how many programs
ended before their Slurm timeout. Deterministic for a seed; counts on a virtual clock, so no
medians are needed (--runs N prints the median over N seeds).

    python benchmarks/power_scale.py [--stack azure-h100] [--runs 1] [--scenario NAME ...]
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import logging
import random
import re
import statistics
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from azure.core.exceptions import HttpResponseError

from clusterctl.power.azure_backend import AzureBackend
from clusterctl.power.program import Config, PowerProgram

CLUSTER = "bench"
SET_SIZE = 100  # VMs per scale set (one placement group, FACTS section 4)
READ_BUCKET, READ_REFILL_S = 250, 25.0
WRITE_BUCKET, WRITE_REFILL_S = 200, 10.0
RESOURCE_BUCKET, RESOURCE_REFILL_S = 12, 4 / 60
READ_LATENCY_S, WRITE_LATENCY_S = 0.1, 0.5  # assumed ARM round trips
PROVISION_S = (240.0, 1200.0)
DEALLOCATE_S = (60.0, 180.0)
THROTTLED_RETRY_AFTER_S = 60
RETURN_EVERY_S = 300.0
EPOCH = datetime(2026, 11, 1).timestamp()


class Killed(BaseException):
    """slurmctld's timeout reached: the program's thread stops where it is."""


class Clock:
    """One thread runs at a time; `sleep` hands over to whoever wakes first."""

    def __init__(self) -> None:
        self.t = 0.0
        self._lock = threading.Lock()
        self._queue: list[tuple[float, int, threading.Event]] = []
        self._seq = itertools.count()
        self._done = threading.Event()
        self.deadline: dict[int, float] = {}  # thread id -> kill time

    def _push(self, at: float) -> threading.Event:
        ev = threading.Event()
        with self._lock:
            heapq.heappush(self._queue, (at, next(self._seq), ev))
        return ev

    def _next(self) -> None:
        with self._lock:
            if not self._queue:
                self._done.set()
                return
            at, _, ev = heapq.heappop(self._queue)
            self.t = max(self.t, at)
        ev.set()

    def sleep(self, seconds: float) -> None:
        kill = self.deadline.get(threading.get_ident())
        if kill is not None and self.t + max(seconds, 0.0) >= kill:
            raise Killed
        ev = self._push(self.t + max(seconds, 0.0))
        self._next()
        ev.wait()

    def run(self, tasks: Iterable[tuple[float, float | None, Callable[[], Any]]]) -> list:
        """tasks: (start time, timeout or None, fn). Returns, per task, fn's result or Killed."""
        results: list = []

        def body(i: int, timeout: float | None, fn: Callable[[], Any], ev: threading.Event):
            ev.wait()
            if timeout is not None:
                self.deadline[threading.get_ident()] = self.t + timeout
            try:
                results[i] = fn()
            except Killed:
                results[i] = Killed
            finally:
                self._next()

        threads = []
        for i, (start, timeout, fn) in enumerate(tasks):
            results.append(None)
            ev = self._push(start)
            threads.append(threading.Thread(target=body, args=(i, timeout, fn, ev), daemon=True))
        for th in threads:
            th.start()
        self._done.clear()
        self._next()
        self._done.wait()
        return results


@dataclass
class Bucket:
    size: float
    refill_s: float
    tokens: float = -1.0
    at: float = 0.0

    def take(self, now: float) -> float:
        """0 when a token was taken, else the seconds until one refills."""
        if self.tokens < 0:
            self.tokens = self.size
        self.tokens = min(self.size, self.tokens + (now - self.at) * self.refill_s)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.refill_s


@dataclass
class Vm:
    power: str = "deallocated"
    until: float = 0.0
    then: str = ""
    started_at: float | None = None
    running_at: float | None = None
    refuse_deallocate_until: float = 0.0

    def at(self, now: float) -> str:
        if self.then and now >= self.until:
            self.power, self.then = self.then, ""
        return self.power


@dataclass
class Compute:
    """azure-mgmt-compute's ComputeManagementClient, as far as AzureBackend calls it."""

    clock: Clock
    rng: random.Random
    vms: dict[tuple[str, str], Vm] = field(default_factory=dict)
    reads_throttled_until: float = 0.0
    calls: int = 0
    throttled: int = 0
    reads: Bucket = field(default_factory=lambda: Bucket(READ_BUCKET, READ_REFILL_S))
    writes: Bucket = field(default_factory=lambda: Bucket(WRITE_BUCKET, WRITE_REFILL_S))
    per_resource: dict[str, Bucket] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.virtual_machine_scale_sets = SimpleNamespace(
            begin_start=self._set_action("start"),
            begin_deallocate=self._set_action("deallocate"),
        )
        self.virtual_machine_scale_set_vms = SimpleNamespace(
            begin_start=self._vm_action("start"),
            begin_deallocate=self._vm_action("deallocate"),
            get_instance_view=self._instance_view,
            list=self._list,
        )

    def _error(self, status: int, code: str, retry_after: float | None = None):
        exc = HttpResponseError(message=code)
        exc.status_code = status
        exc.reason = code
        headers = {"Retry-After": str(int(retry_after + 0.999))} if retry_after else {}
        exc.response = SimpleNamespace(headers=headers)
        exc.error = SimpleNamespace(code=code, message=None)
        return exc

    def _read(self) -> None:
        self.clock.sleep(READ_LATENCY_S)
        self.calls += 1
        now = self.clock.t
        if now < self.reads_throttled_until:
            self.throttled += 1
            raise self._error(429, "TooManyRequests", THROTTLED_RETRY_AFTER_S)
        wait = self.reads.take(now)
        if wait:
            self.throttled += 1
            raise self._error(429, "TooManyRequests", wait)

    def _write(self, resource: str) -> None:
        self.clock.sleep(WRITE_LATENCY_S)
        self.calls += 1
        now = self.clock.t
        bucket = self.per_resource.setdefault(resource, Bucket(RESOURCE_BUCKET, RESOURCE_REFILL_S))
        wait = max(self.writes.take(now), bucket.take(now))
        if wait:
            self.throttled += 1
            raise self._error(429, "TooManyRequests", wait)

    def _act(self, verb: str, keys: list[tuple[str, str]]) -> None:
        now = self.clock.t
        for key in keys:
            if verb == "deallocate" and now < self.vms[key].refuse_deallocate_until:
                raise self._error(409, "OperationNotAllowed")
        for key in keys:
            vm = self.vms[key]
            state = vm.at(now)
            if verb == "start" and state not in ("running", "starting"):
                vm.power, vm.then = "starting", "running"
                vm.until = now + self.rng.uniform(*PROVISION_S)
                vm.started_at = now if vm.started_at is None else vm.started_at
                vm.running_at = vm.until
            elif verb == "deallocate" and state not in ("deallocated", "deallocating"):
                vm.power, vm.then = "deallocating", "deallocated"
                vm.until = now + self.rng.uniform(*DEALLOCATE_S)

    def _set_action(self, verb: str):
        def call(rg: str, scale_set: str, body: dict, polling: bool = False) -> None:
            self._write(scale_set)
            self._act(verb, [(scale_set, i) for i in body["instanceIds"]])

        return call

    def _vm_action(self, verb: str):
        def call(rg: str, scale_set: str, instance_id: str, polling: bool = False) -> None:
            self._write(f"{scale_set}/{instance_id}")
            self._act(verb, [(scale_set, instance_id)])

        return call

    def _view(self, vm: Vm) -> SimpleNamespace:
        power = vm.at(self.clock.t)
        return SimpleNamespace(statuses=[SimpleNamespace(code=f"PowerState/{power}", message="")])

    def _instance_view(self, rg: str, scale_set: str, instance_id: str):
        self._read()
        return self._view(self.vms[(scale_set, instance_id)])

    def _list(self, rg: str, scale_set: str, **kwargs: Any):
        self._read()
        expand = kwargs.get("expand") == "instanceView"
        return [
            SimpleNamespace(instance_id=i, instance_view=self._view(vm) if expand else None)
            for (s, i), vm in sorted(self.vms.items())
            if s == scale_set
        ]


class Slurm:
    """scontrol/sinfo as far as the power program runs them: node states and reasons."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.state: dict[str, tuple[str, str, float]] = {}

    def __call__(self, argv) -> str:
        argv = list(argv)
        if argv[:2] == ["scontrol", "update"]:
            names = argv[2].removeprefix("NodeName=").split(",")
            state = argv[3].removeprefix("State=").lower()
            why = argv[4].removeprefix("Reason=") if len(argv) > 4 else ""
            for n in names:
                self.state[n] = (state, why, self.clock.t)
            return ""
        if argv[:2] == ["sinfo", "-h"]:
            names = argv[argv.index("-n") + 1].split(",") if "-n" in argv else list(self.state)
            fmt = argv[-1]
            out = []
            for n in names:
                state, why, since = self.state.get(n, ("idle", "", 0.0))
                stamp = datetime.fromtimestamp(EPOCH + since).strftime("%Y-%m-%dT%H:%M:%S")
                if fmt == "%N|%H":
                    out.append(f"{n}|{stamp}")
                elif fmt == "%N|%T|%E":
                    out.append(f"{n}|{state}~|{why or 'none'}")
                else:
                    out.append(n)
            return "\n".join(out) + "\n"
        raise AssertionError(argv)

    def down(self) -> set[str]:
        return {n for n, (state, _, _) in self.state.items() if state == "down"}


@dataclass(frozen=True)
class Timeouts:
    resume_s: float
    suspend_s: float
    min_interval_s: float


def slurm_timeouts(stack: str) -> Timeouts:
    """ResumeTimeout, SuspendTimeout and power_save_min_interval of the slurm.conf `plan`
    renders for the stack (the same text cloud-init writes)."""
    from clusterctl.plan.program import load_stack_spec
    from clusterctl.render.bundle import render_bundle

    files = render_bundle(load_stack_spec(stack, [])[0], stack)
    conf = next(text for path, text in files.items() if path.endswith("slurm.conf"))
    values = dict(re.findall(r"^(\w+)=(\S+)", conf, re.M))
    params = values.get("SlurmctldParameters", "")
    found = re.search(r"power_save_min_interval=(\d+)", params)
    interval = max(10.0, float(found[1]) if found else 0.0)  # power_save_interval: 10
    return Timeouts(float(values["ResumeTimeout"]), float(values["SuspendTimeout"]), interval)


@dataclass
class Row:
    scenario: str
    calls: int
    throttled: int
    first_start_s: float | None
    last_running_s: float | None
    not_running: int
    billing_down: int
    programs: int
    killed: int


class Cluster:
    def __init__(self, nodes: int, seed: int, timeouts: Timeouts) -> None:
        self.clock = Clock()
        self.compute = Compute(self.clock, random.Random(seed))
        self.slurm = Slurm(self.clock)
        self.timeouts = timeouts
        self.names: list[str] = []
        for k in range(nodes):
            group, n = f"gpu-pg{k // SET_SIZE}", k % SET_SIZE
            self.compute.vms[(f"{CLUSTER}-{group}", str(n))] = Vm()
            self.names.append(f"{group}-{n + 1}")

    def program(self) -> PowerProgram:
        backend = AzureBackend(self.compute, "rg", sleep=self.clock.sleep)
        if hasattr(backend, "clock"):
            backend.clock = lambda: self.clock.t
        cfg = Config(cluster=CLUSTER, log_file=None, names_root="/nonexistent")
        for key, value in (
            ("resume_deadline_s", self.timeouts.resume_s),
            ("suspend_deadline_s", self.timeouts.suspend_s),
        ):
            if hasattr(cfg, key):  # the deadline below slurmctld's timeout, as power.json has it
                setattr(cfg, key, value - 60)
        prog = PowerProgram(
            cfg,
            backend,
            runner=self.slurm,
            sleep=self.clock.sleep,
            clock=lambda: self.clock.t,
            now=lambda: EPOCH + self.clock.t,
        )
        prog._names, prog._names_read = None, True
        return prog

    def vm(self, name: str) -> Vm:
        group, _, n = name.rpartition("-")
        return self.compute.vms[(f"{CLUSTER}-{group}", str(int(n) - 1))]

    def row(self, scenario: str, results: list, resumed: list[str]) -> Row:
        starts = [vm.started_at for vm in self.compute.vms.values() if vm.started_at is not None]
        running = [self.vm(n).running_at for n in resumed]
        end = self.clock.t
        billing = {n for n in self.names if self.vm(n).at(end) != "deallocated"}
        return Row(
            scenario,
            self.compute.calls,
            self.compute.throttled,
            min(starts) if starts else None,
            max(t for t in running if t is not None) if any(running) else None,
            sum(t is None or t > self.timeouts.resume_s for t in running),
            len(billing & self.slurm.down()),
            len(results),
            sum(r is Killed for r in results),
        )

    def returns(self, start: float, until: float) -> list[tuple[float, float | None, Callable]]:
        """`gpucl-power return ALL` every RETURN_EVERY_S, as the scheduler's timer runs it."""
        at, out = start, []
        while at < until:
            out.append((at, None, lambda: self.program().give_back(sorted(self.slurm.state))))
            at += RETURN_EVERY_S
        return out


def resume_at_once(nodes: int, seed: int, t: Timeouts, throttle_reads_s: float = 0.0) -> Row:
    c = Cluster(nodes, seed, t)
    c.compute.reads_throttled_until = throttle_reads_s
    names = c.names
    results = c.clock.run([(0.0, t.resume_s, lambda: c.program().resume(names))])
    label = f"resume {nodes} at once" + (
        f", reads throttled {throttle_reads_s / 60:.0f} min" if throttle_reads_s else ""
    )
    return c.row(label, results, names)


def resume_batches(nodes: int, batches: int, seed: int, t: Timeouts) -> Row:
    c = Cluster(nodes, seed, t)
    step = -(-nodes // batches)
    tasks = []
    for b in range(batches):
        part = c.names[b * step : (b + 1) * step]
        if part:
            tasks.append((float(b), t.resume_s, lambda part=part: c.program().resume(part)))
    results = c.clock.run(tasks)
    return c.row(f"resume {nodes} in {batches} programs", results, c.names)


def suspend_waves(nodes: int, seed: int, t: Timeouts, per_second: float = 1.0) -> Row:
    """Nodes go idle at `per_second` a second, spread over the scale sets; slurmctld starts a
    SuspendProgram every min_interval with the nodes that went idle since."""
    c = Cluster(nodes, seed, t)
    sets = -(-nodes // SET_SIZE)
    order = [c.names[(k % sets) * SET_SIZE + k // sets] for k in range(nodes)]
    for name in order:
        c.vm(name).power = "running"
    per_wave = max(1, int(per_second * t.min_interval_s))
    tasks = []
    for w in range(0, nodes, per_wave):
        wave = order[w : w + per_wave]
        at = (w // per_wave + 1) * t.min_interval_s
        tasks.append((at, t.suspend_s, lambda wave=wave: c.program().suspend(wave)))
    results = c.clock.run(tasks)
    row = c.row(f"suspend {nodes} in waves every {t.min_interval_s:.0f} s", results, [])
    row.first_start_s = row.last_running_s = None
    return row


def failed_stop(nodes: int, seed: int, t: Timeouts, refused_s: float = 900.0) -> Row:
    """One VM refuses its deallocate for `refused_s` (an operation in progress on it); an hour
    of the return timer follows."""
    c = Cluster(nodes, seed, t)
    for name in c.names:
        c.vm(name).power = "running"
    c.vm(c.names[nodes // 2]).refuse_deallocate_until = refused_s
    tasks = [(0.0, t.suspend_s, lambda: c.program().suspend(c.names))]
    results = c.clock.run(tasks + c.returns(RETURN_EVERY_S, 3600.0))
    row = c.row(f"suspend {nodes}, one deallocate refused {refused_s / 60:.0f} min", results, [])
    row.first_start_s = row.last_running_s = None
    row.programs, row.killed = 1, int(results[0] is Killed)
    return row


SCENARIOS: dict[str, Callable[[int, Timeouts], Row]] = {
    "resume-512": lambda s, t: resume_at_once(512, s, t),
    "resume-1000": lambda s, t: resume_at_once(1000, s, t),
    "resume-1000-batches": lambda s, t: resume_batches(1000, 50, s, t),
    "resume-512-throttled": lambda s, t: resume_at_once(512, s, t, throttle_reads_s=1800.0),
    "suspend-1000-waves": lambda s, t: suspend_waves(1000, s, t),
    "failed-stop": lambda s, t: failed_stop(100, s, t),
}


def median_row(rows: list[Row]) -> Row:
    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    fields = ("calls", "throttled", "first_start_s", "last_running_s", "not_running",
              "billing_down", "programs", "killed")  # fmt: skip
    return Row(rows[0].scenario, *[med(getattr(r, f) for r in rows) for f in fields])


def show(rows: list[Row], t: Timeouts) -> None:
    def sec(v):
        return "-" if v is None else f"{v:,.0f} s"

    print(
        f"ResumeTimeout {t.resume_s:.0f} s, SuspendTimeout {t.suspend_s:.0f} s, "
        f"a power program at most every {t.min_interval_s:.0f} s (rendered slurm.conf)"
    )
    head = ("scenario", "calls", "429s", "first start", "last running", "late",
            "billing DOWN", "in time")  # fmt: skip
    print(f"{head[0]:<42} {head[1]:>6} {head[2]:>6} {head[3]:>11} {head[4]:>12} {head[5]:>5} "
          f"{head[6]:>12} {head[7]:>8}")  # fmt: skip
    for r in rows:
        in_time = f"{r.programs - r.killed:.0f}/{r.programs:.0f}"
        print(f"{r.scenario:<42} {r.calls:>6,.0f} {r.throttled:>6,.0f} {sec(r.first_start_s):>11} "
              f"{sec(r.last_running_s):>12} {r.not_running:>5.0f} {r.billing_down:>12.0f} "
              f"{in_time:>8}")  # fmt: skip
    print(
        "late: nodes not running within ResumeTimeout; billing DOWN: nodes Slurm has DOWN whose "
        "VM still bills at the end; in time: programs that ended before their Slurm timeout"
    )


def run(names: list[str], seeds: int, t: Timeouts) -> list[Row]:
    logging.getLogger("gpucl-power").setLevel(logging.CRITICAL)
    return [median_row([SCENARIOS[n](seed, t) for seed in range(seeds)]) for n in names]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stack", default="azure-h100")
    parser.add_argument("--runs", type=int, default=1, help="seeds; the median is printed")
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    args = parser.parse_args(argv)
    t = slurm_timeouts(args.stack)
    show(run(args.scenario or list(SCENARIOS), args.runs, t), t)


if __name__ == "__main__":
    main()
