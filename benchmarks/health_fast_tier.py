"""The fast health-check tier's wall time on a VM sandbox node (root), against slurmd's 60 s
budget for a HealthCheckProgram. Medians of --runs, each as a ratio to a floor measured the same
way in the same run (`true` through the same nsenter into the node).

    sudo python benchmarks/health_fast_tier.py [--runs 9] [--workdir DIR]

Boots azure-h100 with one GPU node unless --workdir names a running VM sandbox. Measured:
  nhc        /usr/sbin/nhc on the fast conf (LBNL NHC stand-in + gpu-clusters' gpucl.nhc checks)
  health     gpucl-health.sh, Slurm's HealthCheckProgram (NHC, then sinfo/scontrol)
The NHC driver is the sandbox's stand-in and nvidia-smi a script: on an ND VM each nvidia-smi
call costs more (tens to hundreds of ms), so read the check counts with the times.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clusterctl.sandbox.vm import boot, machine, vmstate

ROOT = Path(__file__).resolve().parent.parent
HEALTH = "/usr/local/libexec/gpu-clusters/gpucl-health.sh"
COMMANDS = {
    "floor": ["true"],
    "nhc": ["/usr/sbin/nhc", "-c", "/etc/nhc/gpucl-fast.conf", "MARK_OFFLINE=0"],
    "health": ["env", "SLURMD_NODENAME=gpu-pg0-1", HEALTH],
}


def timed(init: int, argv: list[str]) -> float:
    t = time.perf_counter()
    proc = machine.run_in(init, argv, timeout=120)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stdout}{proc.stderr}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    workdir, booted = args.workdir, False
    if workdir is None:
        plan = Path(tempfile.mkdtemp(prefix="gpucl-bench-plan-"))
        subprocess.run(
            [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-h100", "--out", str(plan),
             "--set", "partitions[0].nodes=1"],
            check=True, capture_output=True, cwd=ROOT,
        )  # fmt: skip
        workdir = Path(tempfile.mkdtemp(prefix="gpucl-bench-vm-"))
        boot.up(boot.cluster_from_plan(plan, nodes=1), workdir, log=lambda m: None)
        booted = True
    try:
        state = vmstate.load(workdir)
        assert state is not None, f"no VM sandbox in {workdir}"
        node = next(v for v in state.nodes.values() if v["role"] == "gpu")
        checks = machine.run_in(node["init"], ["grep", "-c", "||", "/etc/nhc/gpucl-fast.conf"])
        times: dict[str, list[float]] = {k: [] for k in COMMANDS}
        for _ in range(args.runs):
            for name, argv in COMMANDS.items():
                times[name].append(timed(node["init"], argv))
        floor = statistics.median(times["floor"])
        print(f"fast tier: {checks.stdout.strip()} checks; medians of {args.runs} runs")
        for name in ("floor", "nhc", "health"):
            med = statistics.median(times[name])
            print(f"  {name:7s} {med * 1000:8.1f} ms   x{med / floor:6.1f} floor   "
                  f"{med / 60 * 100:5.2f} % of slurmd's 60 s")  # fmt: skip
    finally:
        if booted:
            boot.down(workdir, log=lambda m: None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
