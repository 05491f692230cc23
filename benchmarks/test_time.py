"""How long the two test suites take: the fast suite run here, the e2e suite from a run's report.

    python benchmarks/test_time.py [--runs 3] [--target 480] [--e2e JUNIT.xml] [-- PYTEST_ARGS]

The fast suite is the README's `.venv/bin/python -m pytest -q` (every test outside tests/e2e/, in
parallel), run --runs times from the repository root with this interpreter, interleaved with its
floor: the same pytest collecting the same tests without running them (interpreter start, imports,
collection). It prints the median wall time, its ratio to the floor, the test count and the load
average before and after (another process on the machine shows there). PYTEST_ARGS narrow the
suite (a path, `-k`); --runs 0 runs nothing. Exit 1 when the median is above --target seconds.

--e2e reads the JUnit XML of an e2e run (`sudo .venv/bin/python -m pytest -q -m e2e --junitxml
e2e.xml`, as .ci/run writes it) and prints the run's wall time, the time spent in tests (two
workers run modules side by side, so more than the wall) and each module's share of that time,
largest first.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST = [sys.executable, "-m", "pytest", "-q"]  # the README's command


def timed(args: list[str]) -> tuple[float, str]:
    """Wall seconds and stdout of one pytest process; fails loudly unless it passed."""
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[1:])} exited {proc.returncode}:\n{proc.stdout[-3000:]}")
    return took, proc.stdout


def fast_suite(runs: int, extra: list[str], target: float) -> bool:
    """Print the fast suite's median against its floor; True when within target."""
    load_before = os.getloadavg()
    walls: list[float] = []
    floors: list[float] = []
    count = 0
    for _ in range(runs):  # interleaved: a busy moment hits the run and its floor alike
        floor, listing = timed([*PYTEST, "--collect-only", *extra])
        floors.append(floor)
        count = sum("::" in line for line in listing.splitlines())
        wall, _ = timed([*PYTEST, *extra])
        walls.append(wall)
    med, base = statistics.median(walls), statistics.median(floors)
    load_after = os.getloadavg()
    cpus = os.cpu_count()
    print(f"fast suite: {count} tests, median of {runs} runs, {sys.executable}, {cpus} CPUs")
    print(f"load average (1, 5, 15 min) before {_load(load_before)}, after {_load(load_after)}")
    print(f"{'':28} {'wall s':>8} {'x floor':>8} {'target':>8}")
    print(f"{'collect only (floor)':28} {base:8.1f} {1.0:8.1f}")
    verdict = "ok" if med <= target else "OVER"
    print(f"{'fast suite':28} {med:8.1f} {med / base:8.1f} {verdict:>8}")
    print("runs: " + ", ".join(f"{w:.1f}" for w in walls))
    return med <= target


def _load(avg: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.1f}" for x in avg)


def module_of(classname: str) -> str:
    """`tests.e2e.vm.test_vm_boot` for a test function there or for a method of a class in it."""
    parts = classname.split(".")
    while len(parts) > 1 and parts[-1][:1].isupper():
        parts.pop()
    return ".".join(parts)


def e2e_report(junit: Path) -> None:
    """The run's wall time and each module's share, from pytest's JUnit XML."""
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    wall = sum(float(s.get("time", 0)) for s in suites)
    per_module: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for case in root.iter("testcase"):
        module = module_of(case.get("classname", ""))
        per_module[module] += float(case.get("time", 0))  # setup + call + teardown
        counts[module] += 1
    if not wall or not per_module:
        raise SystemExit(f"{junit}: no timed tests in this report")
    when = next((s.get("timestamp") for s in suites if s.get("timestamp")), "?")
    busy = sum(per_module.values())
    print(f"e2e suite ({junit}, started {when}): {sum(counts.values())} tests, {wall:.0f} s wall, "
          f"{busy:.0f} s in tests ({busy / wall:.2f} tests at a time on average)")  # fmt: skip
    print(f"{'module':48} {'tests':>5} {'s':>7} {'share':>6}")
    for module, secs in sorted(per_module.items(), key=lambda kv: -kv[1]):
        print(f"{module:48} {counts[module]:5} {secs:7.0f} {secs / busy:6.1%}")


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fast-suite runs (0: none)")
    parser.add_argument("--target", type=float, default=480, help="seconds, fast-suite median")
    parser.add_argument("--e2e", type=Path, help="JUnit XML of an e2e run (pytest --junitxml)")
    opts = parser.parse_args(argv)
    if any(re.fullmatch(r"-m|--markexpr", a) for a in extra):
        parser.error("PYTEST_ARGS narrow the fast suite; its selection (-m) is pytest's default")
    within = fast_suite(opts.runs, extra, opts.target) if opts.runs else True
    if opts.e2e:
        e2e_report(opts.e2e)
    if not within:
        raise SystemExit(f"above {opts.target:g} s: the fast suite")


if __name__ == "__main__":
    main()
