"""First-boot CPU seconds of a GPU node (root): a new cluster's nodes and a node added later.

Boots the stack's rendered user-data in the VM sandbox (1 scheduler + 2 GPU nodes, slurm.conf
sized for 3), then adds the third scale-set VM as a resize does, and reads each GPU node's CPU
time (its container's cpuacct cgroup) once its cloud-init is done. A node of a running cluster
installs pyxis and LBNL NHC from the cluster's build cache; a new cluster's nodes may build them.

    sudo python benchmarks/first_boot_cpu.py [--runs 3]

Prints medians over the runs: CPU-s per day-1 GPU node, CPU-s of the added node, and the added
node as a ratio to the day-1 nodes of the same run (the floor: what a node costs with no cache).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from sandbox_vm_boot import cpu_seconds, make_plan  # beside this file (a script's path)

from clusterctl.sandbox.vm import boot, vmstate


def one_run(plan: Path) -> tuple[list[float], float]:
    workdir = Path(tempfile.mkdtemp(prefix="gpucl-cpu-bench-"))
    try:
        specs = boot.cluster_from_plan(plan)
        first, third = specs[:-1], specs[-1]
        reports = boot.up(first, workdir, timeout=900, log=lambda _m: None)
        assert all(r["cloud_init"] == "done" for r in reports.values()), reports
        state = vmstate.load(workdir)
        assert state is not None
        root = Path(f"/sys/fs/cgroup/cpuacct/gpucl-{state.sid}")
        day1 = [cpu_seconds(root / s.name) for s in first if s.role == "gpu"]
        report = boot.add_node(workdir, third, log=lambda _m: None)
        assert report["cloud_init"] == "done" and not report["errors"], report
        return day1, cpu_seconds(root / third.name)
    finally:
        boot.down(workdir, log=lambda _m: None)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stack", default="azure-h100")
    opts = ap.parse_args()
    plan = make_plan(opts.stack, 3)
    day1, added, ratios = [], [], []
    for _ in range(opts.runs):
        d, a = one_run(plan)
        day1 += d
        added.append(a)
        ratios.append(a / statistics.median(d))
    print(
        f"{'day-1 GPU node CPU-s':>22} {'added node CPU-s':>17} {'added x day-1':>14} {'runs':>5}"
    )
    print(f"{statistics.median(day1):22.1f} {statistics.median(added):17.1f} "
          f"{statistics.median(ratios):14.2f} {opts.runs:5d}")  # fmt: skip


if __name__ == "__main__":
    main()
