"""A month in a day, timed (root): the scripted soak on a VM sandbox of 1 scheduler + 4
GPU nodes with power times scaled to seconds (tests/e2e/vm/soak.py), its table per run,
then medians.

    sudo .venv/bin/python benchmarks/soak.py [--runs 1] [--json result.json]

Each run boots its own sandbox, plays every step of the month, checks the invariants after each
step and at every poll, and brings the sandbox down. `floor`: the same run's boot of 1+4 nodes to
idle (no soak can take less); `x floor` is the soak's wall time over it. Exit 1 when any run saw
a violation or lost a job, or when the median wall time is above the target (stderr says which).
Target: the whole soak, boot included, <= 20 min on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from clusterctl.sandbox.vm import report
from tests.e2e.vm import soak  # the scripted month lives with its e2e test

TARGET_S = 20 * 60


def one_run(verbose: bool, keep_logs: Path | None = None) -> soak.Result:
    workdir = Path(tempfile.mkdtemp(prefix="gpucl-soak-"))
    t0 = time.monotonic()
    failed = True

    def log(msg: str) -> None:
        if verbose:
            print(f"{time.monotonic() - t0:7.1f} {msg}", file=sys.stderr, flush=True)

    try:
        s = soak.Soak.boot(workdir, log=log)
        try:
            result = s.play()
            failed = bool(result.violations or result.lost)
            return result
        finally:
            s.down()
            left = report.leftovers(workdir)
            assert not left, f"the soak's sandbox left {left}"
    finally:
        if failed and keep_logs and (workdir / "logs").is_dir():
            # the nodes' journals and Slurm logs, the only record of what went wrong
            shutil.copytree(workdir / "logs", keep_logs, dirs_exist_ok=True)
            print(f"soak: logs of the failed run kept in {keep_logs}", file=sys.stderr)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1, help="each run is a whole soak (~15 min)")
    ap.add_argument("--json", type=Path, help="every run's result, as JSON")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--keep-logs", type=Path, help="where a failed run's node logs are copied")
    opts = ap.parse_args()
    results = []
    for i in range(opts.runs):
        result = one_run(not opts.quiet, opts.keep_logs)
        results.append(result)
        print(f"run {i + 1} of {opts.runs}")
        print(result.table(), flush=True)
        if opts.json:
            opts.json.write_text(json.dumps([r.__dict__ for r in results], default=vars, indent=1))
    wall = statistics.median(r.wall_s for r in results)
    floor = statistics.median(r.boot_s for r in results)
    lat = [s for r in results for _n, s in r.latencies]
    print(
        f"soak wall {wall:.0f} s, floor (boot 1+4 to idle) {floor:.0f} s, x floor "
        f"{wall / floor:.1f}; resume -> job start median "
        f"{statistics.median(lat) if lat else float('nan'):.1f} s; "
        f"violations {sum(len(r.violations) for r in results)}, "
        f"lost jobs {sum(len(r.lost) for r in results)} (medians of {opts.runs})"
    )
    bad = [r for r in results if r.violations or r.lost]
    if bad:
        print(f"violations or lost jobs in {len(bad)} of {opts.runs} runs", file=sys.stderr)
        return 1
    if wall > TARGET_S:
        print(f"above the target: {wall:.0f} s > {TARGET_S} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
