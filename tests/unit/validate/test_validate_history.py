"""The validation history: one SQLite file, every run kept per stack."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl.errors import UserError
from clusterctl.validate.history import ENV, FILE, History, path_for


def result(status: str, busbw: float | None, group: str = "gpu") -> dict:
    sizes = [] if busbw is None else [
        {"size_bytes": 1 << 34, "busbw_out_of_place_gbps": busbw + 1, "busbw_in_place_gbps": busbw,
         "gated": True, "floor_gbps": 300.0},
    ]  # fmt: skip
    return {
        "status": status,
        "groups": [{"group": group, "measured_busbw_gbps": busbw,
                    "margin_pct": None if busbw is None else (busbw - 300) / 3, "sizes": sizes}],
    }  # fmt: skip


def keep(h: History, stack: str, status: str, busbw: float | None, at: str = "2026-11-01"):
    return h.record(stack, result(status, busbw), at=at, source="run", sku="X", nodes=2,
                    network="IB/GDRDMA", nccl_version="2.26.2")  # fmt: skip


def test_runs_are_kept_per_stack_in_order(tmp_path) -> None:
    h = History(tmp_path / "sub" / FILE)
    # no file yet: nothing kept
    assert h.runs("a") == [] and h.first_accepted("a", ("X", 2)) is None
    keep(h, "a", "fail", 120.0)
    keep(h, "b", "pass", 400.0)
    keep(h, "a", "warn", 310.0, at="2026-11-02")
    keep(h, "a", "pass", 450.0, at="2026-11-03")
    runs = h.runs("a")
    assert [(r.status, r.busbw_gbps, r.floor_gbps) for r in runs] == [
        ("fail", 120.0, 300.0), ("warn", 310.0, 300.0), ("pass", 450.0, 300.0),
    ]  # fmt: skip
    first = h.first_accepted("a", ("X", 2))
    assert first is not None and (first.status, first.at) == ("warn", "2026-11-02")
    assert first.group_points("gpu") == ((1 << 34, 310.0),)
    assert first.group_points("other") == ()
    # a new History on the same file reads the same (nothing held in memory)
    assert [r.id for r in History(h.path).runs("a")] == [r.id for r in runs]


def test_a_run_with_nothing_judged_is_kept_without_figures(tmp_path) -> None:
    run = keep(History(tmp_path / FILE), "a", "inconclusive", None)
    assert (run.busbw_gbps, run.floor_gbps, run.margin_pct) == (None, None, None)
    assert not run.accepted


def test_the_file_is_found_next_to_the_project_state_unless_overridden(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV)
    assert path_for(tmp_path) == tmp_path / ".clusterctl" / FILE
    with pytest.raises(UserError, match=ENV):
        path_for(None)
    monkeypatch.setenv(ENV, str(tmp_path / "mine.db"))
    assert path_for(None) == tmp_path / "mine.db"


def test_a_file_that_is_not_a_database_is_one_clear_error(tmp_path) -> None:
    bad = tmp_path / FILE
    bad.write_text("not sqlite\n" * 100)
    with pytest.raises(UserError, match=f"validation history {bad}: file is not a database"):
        History(bad).runs("a")


def test_every_test_has_a_history_file_of_its_own(_validation_history: Path) -> None:
    import os

    assert os.environ[ENV] == str(_validation_history)
