"""Cold boot and teardown time of the local Slurm sandbox for 2, 4 and 8 nodes (root).

    sudo python benchmarks/sandbox_boot.py [--runs 5]

"Up" ends when every node is idle with its GRES; prints the median of several runs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from clusterctl import sandbox
from clusterctl.sandbox import stack as sandbox_flow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--stack", default="azure-h100")
    opts = parser.parse_args()
    print(f"{'nodes':>5} {'up s (median)':>14} {'down s (median)':>16} {'runs':>5}")
    for nodes in (2, 4, 8):
        ups, downs = [], []
        for _ in range(opts.runs):
            workdir = Path(tempfile.mkdtemp(prefix="clusterctl-bench-"))
            workdir.chmod(0o755)
            start = time.perf_counter()
            sandbox_flow.up(opts.stack, nodes, workdir)
            ups.append(time.perf_counter() - start)
            ok = sandbox.exec(workdir, ["srun", f"-N{nodes}", "true"], timeout=60).returncode == 0
            start = time.perf_counter()
            sandbox_flow.down(workdir)
            downs.append(time.perf_counter() - start)
            workdir.rmdir()
            if not ok:
                raise SystemExit(f"srun across {nodes} nodes failed")
        up_s, down_s = statistics.median(ups), statistics.median(downs)
        print(f"{nodes:5d} {up_s:14.2f} {down_s:16.2f} {opts.runs:5d}")


if __name__ == "__main__":
    main()
