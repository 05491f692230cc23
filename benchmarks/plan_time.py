"""Wall time and peak memory of whole `clusterctl plan` processes, per stack and per node count,
against a floor measured in the same run.

    python benchmarks/plan_time.py [--runs 7]

Prints medians of several runs. The floor is a Python process that imports exactly the provider
modules `plan -s azure-h100` imports (listed by running that plan once in-process) and nothing
else: no plan can start faster than its provider classes load. Targets: `plan -s
azure-h100` <= 1.2x the floor, and 512 nodes <= 1.1x of 2 nodes (scale sets carry the node count,
no resource per node).
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


PROVIDER_PREFIXES = ("pulumi_azure_native.", "pulumi_aws.", "pulumi_kubernetes.", "pulumi_tls.")
LIST_IMPORTS = """
import contextlib, io, sys
sys.argv = ["clusterctl", "plan", "-s", {stack!r}, "--json"]
from clusterctl.cli import _run
with contextlib.redirect_stdout(io.StringIO()):
    code = _run()
loaded = sorted(  # not the lazy stubs the SDKs register for every module they could load
    name for name, m in list(sys.modules.items())
    if name.startswith({prefixes!r}) and type(m).__name__ != "_LazyModule"
)
print("\\n".join(loaded) if code == 0 else f"plan failed: exit {{code}}")
"""


def provider_modules(stack: str) -> list[str]:
    """The provider modules a plan of `stack` imports, as that plan loads them."""
    code = LIST_IMPORTS.format(stack=stack, prefixes=PROVIDER_PREFIXES)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def floor_run(modules: list[str], gc_like_the_cli: bool = False) -> float:
    """Wall seconds of a process that imports `modules` (and pulumi) and exits; with
    `gc_like_the_cli`, under the collector threshold clusterctl's CLI sets (so the ratio to it
    is the plan's own work beyond the imports, not the tuning)."""
    code = "import gc; gc.set_threshold(50_000, 20, 100)\n" if gc_like_the_cli else ""
    code += "import pulumi\n" + "".join(f"import {m}\n" for m in modules)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    opts = parser.parse_args()
    stacks = sorted(
        p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
    )
    cases = [(s, []) for s in stacks] + [
        ("azure-h100", ["partitions[0].nodes=2"]),
        ("azure-h100", ["partitions[0].nodes=512"]),
    ]
    modules = provider_modules("azure-h100")
    # Round-robin, not case after case: a slow minute of the machine then lands on every case.
    floors: list[float] = []
    tuned_floors: list[float] = []
    samples: dict[str, list[tuple[float, float, int]]] = {}
    for _ in range(opts.runs):
        floors.append(floor_run(modules))
        tuned_floors.append(floor_run(modules, True))
        for stack, overrides in cases:
            label = stack + (" " + " ".join(overrides) if overrides else "")
            samples.setdefault(label, []).append(one_run(stack, overrides))
    floor, tuned = statistics.median(floors), statistics.median(tuned_floors)
    print(f"{'case':44} {'wall s (median)':>16} {'peak MiB':>9} {'resources':>9}")
    print(f"{'floor: import its ' + str(len(modules)) + ' provider modules':44} {floor:16.2f}")
    print(f"{'floor, under the CLI gc threshold':44} {tuned:16.2f}")
    medians = {}
    for label, runs in samples.items():
        wall = statistics.median(r[0] for r in runs)
        peak = statistics.median(r[1] for r in runs)
        medians[label] = wall
        print(f"{label:44} {wall:16.2f} {peak:9.0f} {runs[-1][2]:9d}")
    small = medians["azure-h100 partitions[0].nodes=2"]
    large = medians["azure-h100 partitions[0].nodes=512"]
    plan = medians["azure-h100"]
    print(f"plan -s azure-h100 vs the floor: {plan / floor:.2f}x (target <= 1.2x)")
    print(f"plan -s azure-h100 vs the floor under the same gc threshold: {plan / tuned:.2f}x")
    print(f"512 vs 2 nodes: {large / small:.2f}x the wall time (target <= 1.1x)")


if __name__ == "__main__":
    main()
