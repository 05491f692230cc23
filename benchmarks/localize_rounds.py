"""How many rounds, pair runs and how much time bad-node localisation takes, against testing
every pair, for 4, 8 and 16 nodes.

Simulated: each 2-node run takes PAIR_SECONDS (+-10%), a round's disjoint pairs run in parallel,
so a round costs its slowest pair plus SUBMIT_SECONDS. Testing every pair needs N(N-1)/2 runs
in N-1 rounds at best (a round-robin schedule). Healthy pairs scatter +-5% around 400 GB/s, a
bad node drags its pair to 40-60%. Medians over --runs random placements of the bad nodes.

With --sandbox (root): also real `clusterctl validate --nccl --sandbox` runs on the VM sandbox
(clusterctl sandbox) with one node's link slowed (tbf), timed end to end.

    python benchmarks/localize_rounds.py [--runs 25] [--sandbox 4,8] [--sandbox-runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clusterctl.nccl.localize import localize

PAIR_SECONDS = 90.0  # 8 B..16 GiB, -n 20 -w 5, on two 8-GPU nodes
SUBMIT_SECONDS = 10.0  # sbatch, scheduling, job start
HEALTHY, FLOOR = 400.0, 300.0


def simulate(n: int, bad: int, rng: random.Random) -> dict[str, float]:
    nodes = [f"n{i:02d}" for i in range(n)]
    culprits = set(rng.sample(nodes, bad))
    clock = 0.0

    def measure(pairs):
        nonlocal clock
        clock += max(PAIR_SECONDS * rng.uniform(0.9, 1.1) for _ in pairs) + SUBMIT_SECONDS
        return {
            p: HEALTHY
            * rng.uniform(0.95, 1.05)
            * (rng.uniform(0.4, 0.6) if culprits & set(p) else 1)
            for p in pairs
        }

    loc = localize(nodes, measure, lambda v: v >= FLOOR)
    found = loc.bad == culprits
    all_rounds = n - 1
    return {
        "rounds": loc.rounds,
        "pairs": loc.pairs_measured,
        "seconds": clock,
        "correct": float(found),
        "all_pairs": n * (n - 1) // 2,
        "all_rounds": all_rounds,
        "all_seconds": all_rounds * (PAIR_SECONDS * 1.05 + SUBMIT_SECONDS),
    }


def simulated_table(runs: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    rows = []
    for n in (4, 8, 16):
        for bad in (0, 1, 2):
            if 4 * bad > n:
                continue
            results = [simulate(n, bad, rng) for _ in range(runs)]

            def med(key: str, results=results) -> float:
                return statistics.median(r[key] for r in results)

            rows.append({
                "nodes": n, "bad": bad, "rounds": med("rounds"),
                "max_rounds": max(r["rounds"] for r in results), "pairs": med("pairs"),
                "minutes": med("seconds") / 60,
                "correct": sum(r["correct"] for r in results) / runs,
                "all_pairs": results[0]["all_pairs"], "all_rounds": results[0]["all_rounds"],
                "all_minutes": results[0]["all_seconds"] / 60,
            })  # fmt: skip
    return rows


def sandbox_runs(sizes: list[int], runs: int) -> list[dict[str, object]]:
    import tempfile

    from clusterctl.sandbox.vm import boot, faults
    from clusterctl.spec.topology import scale_sets_of

    rows = []
    for n in sizes:
        times, rounds, pairs, right = [], [], [], 0
        plan = Path(tempfile.mkdtemp(prefix="gpucl-bench-plan-"))
        subprocess.run(
            [sys.executable, "-m", "clusterctl", "plan", "-s", "azure-h100", "--out", str(plan),
             "--set", f"partitions[0].nodes={n}"],
            check=True, capture_output=True,
        )  # fmt: skip
        specs = boot.cluster_from_plan(plan, nodes=n)
        hosts = [s.name for s in specs if s.role == "gpu"]
        slurm = [h for g in scale_sets_of("gpu", n) for h in g.hostnames()]
        for k in range(runs):
            workdir = Path(tempfile.mkdtemp(prefix="gpucl-bench-vm-"))
            boot.up(specs, workdir, timeout=900, log=lambda m: None)
            slow = (k * 3 + 2) % n
            try:
                faults.inject(workdir, hosts[slow], "slow-link", rate="4mbit")
                start = time.monotonic()
                proc = subprocess.run(
                    [sys.executable, "-m", "clusterctl", "validate", "--nccl",
                     "--sandbox-dir", str(workdir), "--json"],
                    capture_output=True, text=True, timeout=900,
                )  # fmt: skip
                times.append(time.monotonic() - start)
                data = json.loads(proc.stdout)
                sweep = data["sweep"]
                rounds.append(sweep["rounds"])
                pairs.append(sweep["pairs_measured"])
                bad = [s["node"] for s in sweep["suspects"] if s["status"] == "bad"]
                right += bad == [slurm[slow]]
            finally:
                boot.down(workdir, log=lambda m: None)
        rows.append({"nodes": n, "runs": runs, "rounds": statistics.median(rounds),
                     "pairs": statistics.median(pairs), "seconds": statistics.median(times),
                     "correct": right / runs, "all_pairs": n * (n - 1) // 2})  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sandbox", default="", help="comma-separated node counts, e.g. 4,8")
    ap.add_argument("--sandbox-runs", type=int, default=3)
    args = ap.parse_args()

    print(f"simulated: {PAIR_SECONDS:g} s per pair run + {SUBMIT_SECONDS:g} s per round, "
          f"medians of {args.runs} placements")  # fmt: skip
    head = ("nodes", "bad", "rounds (max)", "pair runs", "minutes", "found", "| every pair: runs",
            "rounds", "minutes")  # fmt: skip
    print("  ".join(head))
    for r in simulated_table(args.runs, args.seed):
        print(f"{r['nodes']:5d}  {r['bad']:3d}  {r['rounds']:6g} ({r['max_rounds']})  "
              f"{r['pairs']:9g}  {r['minutes']:7.1f}  {r['correct']:5.0%}  "
              f"| {r['all_pairs']:16d}  {r['all_rounds']:6d}  {r['all_minutes']:7.1f}")  # fmt: skip
    if args.sandbox:
        sizes = [int(x) for x in args.sandbox.split(",")]
        print(f"\nsandbox: one node slowed (tc), end to end `validate --nccl --sandbox`, "
              f"medians of {args.sandbox_runs} runs")  # fmt: skip
        print("nodes  rounds  pair runs  seconds  found  | every pair: runs")
        for r in sandbox_runs(sizes, args.sandbox_runs):
            print(f"{r['nodes']:5d}  {r['rounds']:6g}  {r['pairs']:9g}  {r['seconds']:7.1f}  "
                  f"{r['correct']:5.0%}  | {r['all_pairs']:16d}")  # fmt: skip


if __name__ == "__main__":
    main()
