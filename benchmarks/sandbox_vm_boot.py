"""VM sandbox timings (root): image build, boot to cloud-init done, idle PSS, down. Medians.

Image build uncached and cached; scheduler + N GPU nodes from the cached image to `cloud-init
status` final on every node; idle PSS per container; `down`.

    sudo python benchmarks/sandbox_vm_boot.py [--runs 3] [--nodes 2 4] [--image-runs 1]

Boots azure-h100's rendered user-data (so its real bugs fail units; timing is to cloud-init's end).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clusterctl.sandbox.vm import boot, image, repo, report, vmstate

ROOT = Path(__file__).resolve().parent.parent


def time_image(runs: int) -> tuple[list[float], list[float]]:
    uncached, cached = [], []
    for _ in range(runs):
        shutil.rmtree(image.CACHE_ROOT, ignore_errors=True)
        t = time.perf_counter()
        repo.prepare(image.build(log=lambda _m: None), log=lambda _m: None)
        uncached.append(time.perf_counter() - t)
        t = time.perf_counter()
        repo.prepare(image.build(log=lambda _m: None), log=lambda _m: None)
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


def one_boot(plan: Path, nodes: int, idle_s: float) -> tuple[float, float, list[float]]:
    workdir = Path(tempfile.mkdtemp(prefix="gpucl-vm-bench-"))
    try:
        t = time.perf_counter()
        boot.up(boot.cluster_from_plan(plan, nodes), workdir, timeout=900, log=lambda _m: None)
        up_s = time.perf_counter() - t
        time.sleep(idle_s)
        state = vmstate.load(workdir)
        assert state is not None
        pss = [
            pss_kib(Path(f"/sys/fs/cgroup/memory/gpucl-{state.sid}/{n}")) / 1024
            for n in state.nodes
        ]
        t = time.perf_counter()
        boot.down(workdir, log=lambda _m: None)
        down_s = time.perf_counter() - t
        left = report.leftovers(workdir)
        assert not left, left
        return up_s, down_s, pss
    finally:
        boot.down(workdir, log=lambda _m: None)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", type=int, nargs="+", default=[2, 4])
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
    plan = Path(tempfile.mkdtemp(prefix="gpucl-vm-plan-"))
    subprocess.run(
        [sys.executable, "-m", "clusterctl", "plan", "-s", opts.stack, "--out", str(plan)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    print(f"{'nodes':>7} {'up s':>7} {'down s':>7} {'idle PSS MiB/container':>24} {'runs':>5}")
    for n in opts.nodes:
        ups, downs, psss = [], [], []
        for _ in range(opts.runs):
            up_s, down_s, pss = one_boot(plan, n, opts.idle)
            ups.append(up_s)
            downs.append(down_s)
            psss += pss
        print(
            f"{'1+' + str(n):>7} {statistics.median(ups):7.1f} {statistics.median(downs):7.1f} "
            f"{statistics.median(psss):24.1f} {opts.runs:>5}"
        )
    shutil.rmtree(plan, ignore_errors=True)


if __name__ == "__main__":
    main()
