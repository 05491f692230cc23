"""How long `clusterctl` takes to start: wall time of whole processes, median of --runs.

    python benchmarks/cli_start.py [--runs 9] [--target 0.35]

Each case runs as `<this python> -m clusterctl ...` from the repository root, interleaved with
`python -c pass` (the interpreter's own start, measured in the same run) so the ratio says what
clusterctl adds. Cases: `--help`, `validate --nccl --from-log` on a sample log (parse, judge,
print), and `plan -s azure-h100` for reference (it runs the Pulumi program; no target).
A minimal typer app with one option is measured too: the floor any typer CLI pays here.
Exit 1 when a targeted case's median is above --target seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "nccl" / "nccl_tests_issue309_h100_2node.txt"
BASELINE = ("python -c pass", ["-c", "pass"])
# The floor of any typer command with an option (typer coerces values through pydantic, so this
# imports typer, click and pydantic): what clusterctl adds is the rest.
FLOOR_APP = """
import typer
app = typer.Typer()
@app.command()
def one(x: str = typer.Option("a", "--x"), y: bool = typer.Option(False, "--y")) -> None:
    print(x)
@app.command()
def two() -> None:
    pass
app()
"""
FLOOR = ("typer app, one option (floor)", ["-c", FLOOR_APP, "one", "--x", "b"], False)
VALIDATE = ["-m", "clusterctl", "validate", "--nccl", "--from-log", str(SAMPLE),
            "--sku", "Standard_ND96isr_H100_v5"]  # fmt: skip
CASES: list[tuple[str, list[str], bool]] = [
    ("clusterctl --help", ["-m", "clusterctl", "--help"], True),
    ("clusterctl validate --nccl --from-log", VALIDATE, True),
    FLOOR,
    ("clusterctl plan -s azure-h100", ["-m", "clusterctl", "plan", "-s", "azure-h100"], False),
]


def wall(args: list[str]) -> float:
    """Seconds for one whole process; fails loudly on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.decode()}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--target", type=float, default=0.35, help="seconds, median")
    opts = parser.parse_args()
    for _, args, _ in [*CASES, (*BASELINE, False)]:
        wall(args)  # warm the file cache and the .pyc files once
    times: dict[str, list[float]] = {label: [] for label, _, _ in [*CASES, (*BASELINE, False)]}
    for _ in range(opts.runs):  # interleaved: a busy moment hits every case alike
        times[BASELINE[0]].append(wall(BASELINE[1]))
        for label, args, _ in CASES:
            times[label].append(wall(args))
    base = statistics.median(times[BASELINE[0]])
    load = os.getloadavg()[0]
    print(f"median of {opts.runs} runs, {sys.executable}, {os.cpu_count()} CPUs, load {load:.1f}")
    print(f"{'case':40} {'wall s':>8} {'x python -c pass':>17} {'target':>8}")
    print(f"{BASELINE[0]:40} {base:8.3f} {1.0:17.1f} {'':>8}")
    over = []
    for label, _, targeted in CASES:
        med = statistics.median(times[label])
        verdict = ("ok" if med <= opts.target else "OVER") if targeted else "-"
        if targeted and med > opts.target:
            over.append(label)
        print(f"{label:40} {med:8.3f} {med / base:17.1f} {verdict:>8}")
    if over:
        raise SystemExit(f"above {opts.target:g} s: {', '.join(over)}")


if __name__ == "__main__":
    main()
