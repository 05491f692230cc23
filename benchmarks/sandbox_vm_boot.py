"""VM sandbox timings (root): image build, boot to all nodes idle, idle PSS, down. Medians.

Image build uncached and cached; scheduler + N GPU nodes from the cached image, per stage:
`start` (lab and containers started), `cloud-init` (until `cloud-init status` is final on every
node), `idle` (until sinfo shows every GPU node idle); idle PSS per container; `down`.

    sudo python benchmarks/sandbox_vm_boot.py [--runs 3] [--nodes 4 16] [--image-runs 1]

Boots the stack's rendered user-data (azure-h100 by default), as `clusterctl sandbox up` does.
`floor`: the CPU seconds the nodes' own boots used, over this machine's cores: no harness could
boot them faster here; `x floor` is total over floor. `cpu/gpu s`: the CPU seconds of one GPU
node's first boot (median over the nodes, its container's cgroup).
Targets: uncached build <= 180 s, cached 0 s; 1+4 to idle <= 45 s, 1+16 <= 180 s;
<= 100 MiB idle PSS per container; down <= 10 s for 16 nodes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clusterctl.sandbox.vm import boot, checks, image, report, vmstate

ROOT = Path(__file__).resolve().parent.parent


def time_image(runs: int) -> tuple[list[float], list[float]]:
    uncached, cached = [], []
    for _ in range(runs):
        shutil.rmtree(image.CACHE_ROOT, ignore_errors=True)
        t = time.perf_counter()
        boot.prepare_layers(log=lambda _m: None)
        uncached.append(time.perf_counter() - t)
        t = time.perf_counter()
        boot.prepare_layers(log=lambda _m: None)
        cached.append(time.perf_counter() - t)
    return uncached, cached


def pss_kib(cgroup: Path) -> int:
    """Sum of Pss over every process in a cgroup subtree (the container's whole process tree)."""
    total = 0
    for procs in cgroup.rglob("cgroup.procs"):
        for pid in procs.read_text().split():
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
            except OSError:
                continue
    return total


def cpu_seconds(cgroup: Path) -> float:
    """CPU time the sandbox's containers (and lab server) used: its cpuacct subtree."""
    try:
        return int((cgroup / "cpuacct.usage").read_text()) / 1e9
    except OSError:
        return float("nan")


def one_boot(plan: Path, nodes: int, idle_s: float) -> tuple[dict[str, float], float, list[float]]:
    workdir = Path(tempfile.mkdtemp(prefix="gpucl-vm-bench-"))
    try:
        t = time.perf_counter()
        specs = boot.cluster_from_plan(plan, nodes)
        boot.up(specs, workdir, timeout=900, log=lambda _m: None)
        state = vmstate.load(workdir)
        assert state is not None
        stages = json.loads((workdir / "report.json").read_text())["stages_s"]
        t_ci = time.perf_counter()
        scheduler = next(s.name for s in specs if s.role == "scheduler")
        gpu = [s.name for s in specs if s.role != "scheduler"]
        got = checks.wait_idle(
            lambda n, c: boot.run(workdir, n, c), scheduler, len(gpu), timeout=300
        )
        idle = [n for n, (st, _gres) in got.items() if st == "idle"]
        assert len(idle) == len(gpu), f"sinfo shows {got} for {len(gpu)} GPU nodes"
        stages["idle"] = time.perf_counter() - t_ci
        stages["total"] = time.perf_counter() - t
        root = Path(f"/sys/fs/cgroup/cpuacct/gpucl-{state.sid}")
        cpu_s = cpu_seconds(root)
        stages["floor"] = cpu_s / (os.cpu_count() or 1)
        # a GPU node's first boot, in CPU seconds (its container's cgroup)
        stages["cpu/gpu"] = statistics.median(cpu_seconds(root / n) for n in gpu)
        time.sleep(idle_s)
        pss = [
            pss_kib(Path(f"/sys/fs/cgroup/memory/gpucl-{state.sid}/{n}")) / 1024
            for n in state.nodes
        ]
        t = time.perf_counter()
        boot.down(workdir, log=lambda _m: None)
        down_s = time.perf_counter() - t
        left = report.leftovers(workdir)
        assert not left, left
        return stages, down_s, pss
    finally:
        boot.down(workdir, log=lambda _m: None)
        shutil.rmtree(workdir, ignore_errors=True)


def make_plan(stack: str, nodes: int) -> Path:
    """The stack's plan with N GPU nodes, as `sandbox up -n N` makes it (slurm.conf lists
    what boots)."""
    plan = Path(tempfile.mkdtemp(prefix="gpucl-vm-plan-"))
    argv = [sys.executable, "-m", "clusterctl", "plan", "-s", stack, "--out", str(plan)]
    argv += ["--set", f"partitions[0].nodes={nodes}"]
    subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
    return plan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", type=int, nargs="+", default=[4, 16])
    ap.add_argument("--image-runs", type=int, default=1, help="uncached builds (each ~1-2 min)")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds idle before measuring PSS")
    ap.add_argument("--stack", default="azure-h100")
    opts = ap.parse_args()
    if opts.image_runs:
        uncached, cached = time_image(opts.image_runs)
        print(
            f"image build: uncached {statistics.median(uncached):.1f} s, "
            f"cached {statistics.median(cached):.2f} s (medians of {opts.image_runs})"
        )
    cols = ["image", "start", "cloud-init", "idle", "total", "floor", "cpu/gpu"]
    print(
        f"{'nodes':>7} "
        + " ".join(f"{c + ' s':>12}" for c in cols)
        + f" {'x floor':>8} {'down s':>7} {'PSS MiB/node':>13} {'runs':>5}"
    )
    for n in opts.nodes:
        plan = make_plan(opts.stack, n)
        runs: list[dict[str, float]] = []
        downs, psss = [], []
        for _ in range(opts.runs):
            stages, down_s, pss = one_boot(plan, n, opts.idle)
            runs.append(stages)
            downs.append(down_s)
            psss += pss
        med = {c: statistics.median(r[c] for r in runs) for c in cols}
        print(
            f"{'1+' + str(n):>7} "
            + " ".join(f"{med[c]:12.1f}" for c in cols)
            + f" {med['total'] / med['floor']:8.2f}"
            + f" {statistics.median(downs):7.1f} {statistics.median(psss):13.1f} {opts.runs:>5}",
            flush=True,
        )
        shutil.rmtree(plan, ignore_errors=True)


if __name__ == "__main__":
    main()
