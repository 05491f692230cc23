from __future__ import annotations

import pytest

from clusterctl.errors import UserError
from clusterctl.nccl.emit import format_all_reduce, row_from_times
from clusterctl.nccl.judge import judge
from clusterctl.nccl.parse import parse_all_reduce
from clusterctl.spec.catalog import Baseline
from clusterctl.validate.thresholds import Overrides, choose

GIB = 1 << 30
CAT = Baseline(failBelowGBps=180.0, warnBelowGBps=185.0, messageBytes=8 * GIB, source="AzNHC")


def test_catalog_alone() -> None:
    th = choose(CAT)
    assert (th.fail_below_gbps, th.warn_below_gbps, th.message_bytes) == (180.0, 185.0, 8 * GIB)
    assert th.source == "catalog: AzNHC"


def test_stack_overrides_catalog_and_cli_overrides_stack() -> None:
    stack = Overrides(170.0, None, "stack")
    assert choose(CAT, stack=stack).fail_below_gbps == 170.0
    assert choose(CAT, stack=stack).warn_below_gbps == 185.0  # still above the new floor
    th = choose(CAT, stack=stack, cli=Overrides(175.0, None, "command line"))
    assert th.fail_below_gbps == 175.0 and th.source.startswith("command line")


def test_a_higher_floor_drops_a_lower_warning_level() -> None:
    th = choose(CAT, cli=Overrides(190.0, None, "command line"))
    assert th.fail_below_gbps == 190.0 and th.warn_below_gbps is None


def test_floor_equal_to_warning_is_allowed_below_is_refused() -> None:
    assert choose(CAT, cli=Overrides(185.0, None, "cli")).warn_below_gbps == 185.0
    with pytest.raises(UserError, match="must be >= the floor"):
        choose(CAT, cli=Overrides(180.0, 179.0, "cli"))


def test_no_baseline_needs_a_floor() -> None:
    with pytest.raises(UserError, match="--fail-below"):
        choose(None, what="Standard_D8s_v5 with 2 nodes")
    th = choose(None, cli=Overrides(10.0, None, "cli"))
    assert th.message_bytes == GIB  # gate on >= 1 GiB by default


def test_warning_derived_from_expected_only_when_above_floor() -> None:
    b = Baseline(expectedGBps=478.87, failBelowGBps=460.0, messageBytes=16 * GIB, source="x")
    assert choose(b).warn_below_gbps == pytest.approx(464.5, abs=0.01)
    low = Baseline(expectedGBps=470.0, failBelowGBps=460.0, messageBytes=16 * GIB, source="x")
    assert choose(low).warn_below_gbps is None  # 0.97 x 470 = 455.9 < 460


@pytest.mark.parametrize(
    ("busbw", "status"),
    [(179.99, "fail"), (180.0, "warn"), (184.99, "warn"), (185.0, "pass"), (400.0, "pass")],
)
def test_judge_at_the_edges_of_the_chosen_thresholds(busbw: float, status: str) -> None:
    # 2 ranks: busbw = algbw = bytes / time; pick the time that gives `busbw` exactly
    size = 8 * GIB
    t_us = size / (busbw * 1e3)
    rows = [row_from_times(GIB, t_us / 8, t_us / 8, n_ranks=2),
            row_from_times(size, t_us, t_us, n_ranks=2)]  # fmt: skip
    run = parse_all_reduce(format_all_reduce(rows, hosts=["a", "b"]))
    assert run.rows[-1].busbw_min_gbps == pytest.approx(busbw, abs=0.006)
    assert judge(run, choose(CAT)).status == status
