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


def one_run(stack: str, overrides: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MiB) and resource count of one whole `clusterctl plan` process."""
    args = [sys.executable, "-m", "clusterctl", "plan", "-s", stack, "--json"]
    for item in overrides:
        args += ["--set", item]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    stdout = proc.stdout.read()
    # wait4 reaps the child and returns its own rusage: peak memory of this run alone.
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"plan -s {stack} {' '.join(overrides)} failed (exit {proc.returncode})")
    return wall, usage.ru_maxrss / 1024, len(json.loads(stdout)["resources"])


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
    for stack, overrides in cases:
        runs = [one_run(stack, overrides) for _ in range(opts.runs)]
        wall = statistics.median(r[0] for r in runs)
        peak = statistics.median(r[1] for r in runs)
        label = stack + (" " + " ".join(overrides) if overrides else "")
        medians[label] = wall
        print(f"{label:44} {wall:16.2f} {peak:9.0f} {runs[-1][2]:9d}")
    small = medians["azure-h100 partitions[0].nodes=2"]
    large = medians["azure-h100 partitions[0].nodes=512"]
    print(f"512 vs 2 nodes: {large / small:.2f}x the wall time (target <= 1.2x)")


if __name__ == "__main__":
    main()
