"""The soak's bookkeeping (tests/e2e/vm/soak.py) without a sandbox: hostlists, the
transitional marks of sinfo's states, and the table it prints."""

from __future__ import annotations

from tests.e2e.vm import soak


def test_hostlists_expand_as_slurm_writes_them() -> None:
    assert soak.expand("gpu-pg0-[1-2,4],other-3") == ["gpu-pg0-1", "gpu-pg0-2", "gpu-pg0-4",
                                                       "other-3"]  # fmt: skip
    assert soak.expand("n[08-10]") == ["n08", "n09", "n10"]
    assert soak.expand("(null)") == [] and soak.expand("") == []


def test_transitional_marks() -> None:
    assert soak.flags("idle#") == {"#"} and soak.flags("idle%") == {"%"}
    assert soak.flags("mixed!") == {"!"} and soak.flags("completing") == {"completing"}
    assert soak.flags("idle~") == set() and soak.flags("drained~") == set()


def test_the_table_names_steps_not_run_violations_and_lost_jobs() -> None:
    r = soak.Result(steps=[("week of jobs", "ok", 60.0), ("resize", "not run: needs X", 0.0)])
    r.checks = {"drains kept": 10}
    r.violations = [soak.Violation("reboot", "drains kept", "gpu-pg0-1", "unexplained down")]
    r.jobs = {"5": soak.Job("alice", "short", 0.0, "COMPLETED", 1, True),
              "6_1": soak.Job("bob", "array", 0.0, "FAILED")}  # fmt: skip
    r.latencies = [("gpu-pg0-1", 10.0), ("gpu-pg0-2", 20.0), ("gpu-pg0-3", 40.0)]
    r.node_s_powered, r.node_s_busy = 3600.0, 900.0
    table = r.table()
    assert "steps run 1, not run 1" in table and "not run: needs X" in table
    assert "VIOLATION [reboot] drains kept gpu-pg0-1: unexplained down" in table
    assert "jobs submitted 2, completed 1, lost 1 (requeued and completed 1)" in table
    assert "LOST 6_1 (array, last FAILED)" in table
    assert "idle fraction 0.75" in table
    assert "median 20.0 s, max 40.0 s" in table


def test_the_table_gives_first_boot_cpu_by_where_pyxis_and_nhc_came_from() -> None:
    r = soak.Result(first_boots=[("gpu-1", "pyxis built, NHC built", 30.0),
                                 ("gpu-2", "pyxis built, NHC built", 34.0),
                                 ("gpu-3", "pyxis cached, NHC cached", 12.0)])  # fmt: skip
    table = r.table()
    head = "first boot of a GPU node"
    assert f"{head} (pyxis built, NHC built): median 32.0 CPU-s (2 nodes)" in table
    assert f"{head} (pyxis cached, NHC cached): median 12.0 CPU-s (1 nodes)" in table
