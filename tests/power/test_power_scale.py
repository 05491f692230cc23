"""The power program at scale (benchmarks/power_scale.py, small): Azure's documented limits on a
virtual clock, the real program and backend."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("power_scale", ROOT / "benchmarks/power_scale.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["power_scale"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def timeouts(bench):
    return bench.slurm_timeouts("azure-h100")


def test_the_timeouts_come_from_the_rendered_slurm_conf(timeouts) -> None:
    assert (timeouts.resume_s, timeouts.suspend_s) == (1800.0, 600.0)
    assert timeouts.min_interval_s == 30.0


def test_under_half_an_hour_of_throttled_reads_every_node_starts_in_time(bench, timeouts):
    """Reads throttled from the start for 30 minutes (ResumeTimeout): the starts go out first,
    so every VM runs within ResumeTimeout and the program ends before slurmctld's timeout."""
    row = bench.resume_at_once(150, 0, timeouts, throttle_reads_s=1800.0)
    assert row.first_start_s is not None and row.first_start_s < 60
    assert row.not_running == 0
    assert row.killed == 0 and row.programs == 1


def test_a_resume_reads_each_scale_set_not_each_vm(bench, timeouts) -> None:
    row = bench.resume_at_once(200, 0, timeouts)
    # 2 scale sets: a start each, then a list each per 15 s poll while VMs provision (< 20 min)
    assert row.calls <= 2 + 2 * (1200 / 15 + 2)
    assert row.throttled == 0 and row.not_running == 0


def test_concurrent_resumes_stay_an_order_of_magnitude_under_their_calls_in_429s(bench, timeouts):
    row = bench.resume_batches(1000, 50, 0, timeouts)
    assert row.throttled * 10 <= row.calls
    assert row.not_running == 0 and row.killed == 0


def test_suspend_waves_at_the_rendered_interval_are_not_throttled(bench, timeouts) -> None:
    row = bench.suspend_waves(1000, 0, timeouts)
    assert row.throttled * 10 <= row.calls
    assert row.billing_down == 0 and row.killed == 0


def test_a_refused_deallocate_leaves_no_node_billing_while_down(bench, timeouts) -> None:
    row = bench.failed_stop(20, 0, timeouts, refused_s=900.0)
    assert row.billing_down == 0
    assert row.killed == 0


def test_the_benchmark_prints_its_table(bench, capsys) -> None:
    bench.main(["--scenario", "failed-stop"])
    out = capsys.readouterr().out
    assert "billing DOWN" in out and "one deallocate refused" in out
