"""What Slurm power saving saves, on a synthetic 24 h job trace.

(b) Simulated, here: a 16-node ND H100 v5 partition (8 GPUs per node) over 24 hours. Jobs arrive
as a Poisson process whose rate follows the working day (busy 08-20 h, a quarter of that at
night), ask for 1, 2, 4 or 8 whole nodes and run 20 min to 6 h (log-uniform). FIFO, whole nodes.
Without power saving every node bills all day and a job starts as soon as nodes are free. With
it, a node idle for idleMinutes is deallocated (SUSPEND_MINUTES still billed while it stops), a
job that needs more than the powered-up idle nodes starts the missing ones and waits for the
slowest (RESUME_MINUTES +-40%, billed from the start request: Azure bills a VM from the start);
minNodes nodes never suspend. Prices: the catalog's on-demand price for Standard_ND96isr_H100_v5
(config/skus.yaml, with its source). Printed: medians over --runs traces (different seeds) of
GPU-hours billed, dollars per day saved, and the extra wait a job sees for a node to start.

(a) `--sandbox` (root): in the VM sandbox, one GPU node under Slurm's real power saving (the
time-scale substitution: SuspendTime 10 s, SuspendTimeout 5 s), medians over --runs of: sbatch to
RUNNING on a powered-down node (the container starts, systemd boots, slurmd registers), the same on
a powered-up idle node (the floor, measured in the same run), and job end to powered down (idle~),
less the SuspendTime it must wait by design. On Azure a start is minutes (RESUME_MINUTES below).

    python benchmarks/power_save.py [--runs 9] [--nodes 16] [--idle 5,15,60] [--min-nodes 0]
    sudo .venv/bin/python benchmarks/power_save.py --sandbox [--runs 5]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clusterctl.spec.catalog import catalog

SKU = "Standard_ND96isr_H100_v5"
MINUTES = 24 * 60
# Start of a deallocated ND VM to slurmd registered: assumed (FACTS 4: provisioning up to 20).
RESUME_MINUTES = 8.0
SUSPEND_MINUTES = 3.0  # deallocate, billed until the VM has stopped
BUSY_JOBS_PER_HOUR, NIGHT_FACTOR = 1.6, 0.25


@dataclass
class Job:
    arrive: int
    nodes: int
    minutes: int


def trace(rng: random.Random) -> list[Job]:
    jobs = []
    for minute in range(MINUTES):
        hour = minute // 60
        rate = BUSY_JOBS_PER_HOUR * (1 if 8 <= hour < 20 else NIGHT_FACTOR) / 60
        if rng.random() < rate:
            size = rng.choices([1, 2, 4, 8], weights=[4, 3, 2, 1])[0]
            length = int(math.exp(rng.uniform(math.log(20), math.log(360))))
            jobs.append(Job(minute, size, length))
    return jobs


@dataclass
class Node:
    state: str = "off"  # off | booting | idle | busy | stopping
    left: float = 0.0  # minutes left in booting/busy/stopping
    idle: int = 0
    keep: bool = False


def simulate(
    jobs: list[Job], n: int, idle_minutes: int | None, min_nodes: int, rng: random.Random
) -> dict[str, float]:
    """idle_minutes None: no power saving (every node up all day)."""
    saving = idle_minutes is not None
    nodes = [Node("off" if saving else "idle", keep=i < min_nodes) for i in range(n)]
    if saving:
        for node in nodes[:min_nodes]:
            node.state = "idle"
    queue: list[Job] = []
    pending = sorted(jobs, key=lambda j: j.arrive)
    billed = 0.0
    waits: list[float] = []
    claimed: dict[int, tuple[Job, list[Node]]] = {}
    for minute in range(MINUTES):
        while pending and pending[0].arrive == minute:
            queue.append(pending.pop(0))
        # advance every node by a minute
        for node in nodes:
            if node.state != "off":
                billed += 1
            if node.state in ("booting", "busy", "stopping"):
                node.left -= 1
                if node.left <= 0:
                    node.state = {"booting": "idle", "busy": "idle", "stopping": "off"}[node.state]
                    node.idle = 0
            elif node.state == "idle" and not any(node in ns for _, ns in claimed.values()):
                node.idle += 1
                if saving and not node.keep and node.idle >= idle_minutes:
                    node.state, node.left = "stopping", SUSPEND_MINUTES
        # jobs whose claimed nodes have all come up start now
        for key, (job, ns) in list(claimed.items()):
            if all(x.state == "idle" for x in ns):
                for x in ns:
                    x.state, x.left = "busy", job.minutes
                waits.append(minute - job.arrive)
                del claimed[key]
        # FIFO: the head job claims idle nodes, then starts powered-down ones
        taken = {id(x) for _, ns in claimed.values() for x in ns}
        while queue:
            job = queue[0]
            idle = [x for x in nodes if x.state == "idle" and id(x) not in taken]
            off = [x for x in nodes if x.state == "off"]
            if len(idle) + len(off) < job.nodes:
                break
            queue.pop(0)
            use = idle[: job.nodes]
            for x in off[: job.nodes - len(use)]:
                x.state, x.left = "booting", RESUME_MINUTES * rng.uniform(0.6, 1.4)
                use.append(x)
            taken |= {id(x) for x in use}
            if all(x.state == "idle" for x in use):
                for x in use:
                    x.state, x.left = "busy", job.minutes
                waits.append(minute - job.arrive)
            else:
                claimed[id(job)] = (job, use)
    return {"node_hours": billed / 60, "wait_median": statistics.median(waits) if waits else 0.0}


def sandbox(runs: int) -> None:
    import re
    import subprocess
    import tempfile
    import time

    from clusterctl.plan.program import make_plan, write_plan
    from clusterctl.sandbox.vm import boot, power

    suspend_s, suspend_timeout_s = 10, 5
    work = Path(tempfile.mkdtemp(prefix="gpucl-power-bench-"))
    write_plan(make_plan("azure-h100", ["partitions[0].nodes=1"]), work / "plan")
    specs = boot.cluster_from_plan(work / "plan", nodes=1)
    sched = specs[0].name
    wd = work / "sandbox"

    def sh(cmd: str) -> str:
        return boot.run(wd, sched, ["sh", "-c", cmd]).stdout.strip()

    def wait(probe, ok, timeout: float, step: float = 0.25) -> float:
        t0 = time.monotonic()
        while not ok(probe()):
            if time.monotonic() - t0 > timeout:
                raise SystemExit(f"power_save --sandbox: no change within {timeout:.0f} s")
            time.sleep(step)
        return time.monotonic() - t0

    def state() -> str:
        return sh("sinfo -h -N -n gpu-pg0-1 -o %T")

    def job_state(job: str) -> str:
        m = re.search(r"JobState=(\S+)", sh(f"scontrol show job {job} -o"))
        return m.group(1) if m else "?"

    def to_running() -> float:
        t0 = time.monotonic()
        job = sh("sbatch --parsable -N1 -w gpu-pg0-1 --wrap 'sleep 2'")
        wait(lambda: job_state(job), lambda s: s in ("RUNNING", "COMPLETING", "COMPLETED"), 300)
        took = time.monotonic() - t0
        wait(lambda: job_state(job), lambda s: s == "COMPLETED", 60)
        return took

    cold, warm, down = [], [], []
    try:
        boot.up(specs, wd, timeout=600, log=lambda _m: None)
        wait(state, lambda s: s == "idle", 120, 1)
        power.time_scale(wd, sched, suspend_s, suspend_timeout_s, 300)
        for _ in range(runs):
            wait(state, lambda s: s == "idle~", 120)
            cold.append(to_running())
            warm.append(to_running())  # the node is up and idle: the floor
            down.append(wait(state, lambda s: s == "idle~", 120) - suspend_s)
    finally:
        boot.down(wd, log=lambda _m: None)
        subprocess.run(["rm", "-rf", str(work)], check=False)
    floor = statistics.median(warm)
    print(f"VM sandbox, 1 GPU node, Slurm power saving (SuspendTime {suspend_s} s), {runs} runs")
    print(f"  sbatch -> RUNNING, node powered up (floor): {floor:6.1f} s")
    cold_m = statistics.median(cold)
    print(f"  sbatch -> RUNNING, node powered down:       {cold_m:6.1f} s  ({cold_m / floor:.1f}x)")
    print(f"  job end -> powered down, past SuspendTime:  {statistics.median(down):6.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sandbox", action="store_true", help="part (a), in the VM sandbox")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--idle", default="5,15,60", help="idleMinutes values to compare")
    parser.add_argument("--min-nodes", type=int, default=0)
    args = parser.parse_args()
    if args.sandbox:
        sandbox(args.runs)
        return
    sku = catalog().require(SKU, field="benchmark")
    price, gpus = sku.price.usd_per_hour or 0.0, sku.gpus
    rows: dict[str, list[dict[str, float]]] = {}
    busy_hours = []
    for seed in range(args.runs):
        jobs = trace(random.Random(seed))
        busy_hours.append(sum(j.nodes * j.minutes for j in jobs) / 60)
        base = simulate(jobs, args.nodes, None, 0, random.Random(seed))
        rows.setdefault("off", []).append(base)
        for idle in (int(x) for x in args.idle.split(",")):
            got = simulate(jobs, args.nodes, idle, args.min_nodes, random.Random(seed))
            rows.setdefault(f"idleMinutes={idle}", []).append(got)
    print(
        f"{args.nodes} x {SKU} ({gpus} GPUs, ${price:.2f}/h catalog: {sku.price.source}), "
        f"24 h synthetic trace, medians of {args.runs} runs, minNodes={args.min_nodes}"
    )
    print(f"  GPU-hours of work in the trace (median): {statistics.median(busy_hours) * gpus:,.0f}")
    base_gpu_h = statistics.median(r["node_hours"] for r in rows["off"]) * gpus
    print(
        f"{'power saving':<18}{'GPU-h billed':>14}{'$ billed':>12}{'$ saved/day':>14}"
        f"{'ratio':>8}{'job wait (min)':>16}"
    )
    for label, runs in rows.items():
        gpu_h = statistics.median(r["node_hours"] for r in runs) * gpus
        wait = statistics.median(r["wait_median"] for r in runs)
        dollars = gpu_h / gpus * price
        saved = (base_gpu_h - gpu_h) / gpus * price
        print(
            f"{label:<18}{gpu_h:>14,.0f}{dollars:>12,.0f}{saved:>14,.0f}"
            f"{gpu_h / base_gpu_h:>8.2f}{wait:>16.1f}"
        )


if __name__ == "__main__":
    main()
