"""Wall time and peak memory of whole `clusterctl plan` processes, per stack and per node count.

    python benchmarks/plan_time.py [--runs 5]

Prints the median of several runs. The target: a 512-node cluster plans in no more than ~1.2x
the time of a 2-node one, because scale sets carry the node count (no resource per node).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(stack: str, overrides: list[str]) -> tuple[float, int]:
    args = [sys.executable, "-m", "clusterctl", "plan", "-s", stack, "--json"]
    for item in overrides:
        args += ["--set", item]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"plan -s {stack} failed: {stderr.decode()[-500:]}")
    resources = len(json.loads(stdout)["resources"])
    return wall, resources


def peak_rss_mib(args: list[str]) -> float:
    """Peak resident memory of one whole run, from the kernel's accounting of that child."""
    pid = os.spawnv(os.P_NOWAIT, args[0], args)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    stacks = sorted(
        p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
    )
    cases = [(s, []) for s in stacks] + [
        ("azure-h100", ["partitions[0].nodes=2"]),
        ("azure-h100", ["partitions[0].nodes=512"]),
    ]
    print(f"{'case':44} {'wall s (median)':>16} {'peak MiB':>9} {'resources':>9}")
    medians = {}
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1)
    for stack, overrides in cases:
        walls, peaks, count = [], [], 0
        for _ in range(opts.runs):
            wall, count = one_run(stack, overrides)
            os.dup2(devnull, 1)
            try:
                peak = peak_rss_mib(
                    [sys.executable, "-m", "clusterctl", "plan", "-s", stack, "--json"]
                    + [x for o in overrides for x in ("--set", o)]
                )
            finally:
                os.dup2(saved, 1)
            walls.append(wall)
            peaks.append(peak)
        label = stack + (" " + " ".join(overrides) if overrides else "")
        medians[label] = statistics.median(walls)
        wall, peak = statistics.median(walls), statistics.median(peaks)
        print(f"{label:44} {wall:16.2f} {peak:9.0f} {count:9d}")
    small = medians["azure-h100 partitions[0].nodes=2"]
    large = medians["azure-h100 partitions[0].nodes=512"]
    print(f"512 vs 2 nodes: {large / small:.2f}x the wall time (target <= 1.2x)")


if __name__ == "__main__":
    main()
