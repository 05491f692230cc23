"""Every place a person reads a validation shows the peer check's re-run: the terminal table,
`--json`, `--junit`, the HTML report and `validate history`. The run is
`validate --nccl --host` with its scheduler replaced by a launcher stand-in whose pair n7 + n8
runs at 0.875 of the others (tests/validate/test_peer_check.py)."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET

import pytest

from tests.cli.conftest import H100_LOG, error_lines, run_cli
from tests.validate.test_peer_check import HEALTHY, Fabric, Launcher, slow, target


@pytest.fixture
def fabric(monkeypatch):
    """The run's pair jobs: n7 + n8 at 0.875 of the others first; set `.again` for its re-run."""
    import clusterctl.cli.common as common
    import clusterctl.validate.run as run

    box = Fabric(lambda pair, attempt: slow("n8", 0.875, box.again)(pair, attempt))
    box.again = 0.875  # type: ignore[attr-defined]
    real = run.validate
    monkeypatch.setattr(common, "resolve_target", lambda **_: target())
    monkeypatch.setattr(run, "validate", lambda t, o: real(t, o, launcher=Launcher(box)))
    return box


def run(cli, *extra: str):
    return cli("validate", "--nccl", "--host", "admin@sched", *extra)


def test_terminal_shows_first_figure_rerun_median_ratio_and_verdict(cli, fabric) -> None:
    res = run(cli)
    assert res.exit_code == 1, res.stderr
    row = next(line for line in res.stdout.splitlines() if "n7 + n8" in line and "named" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells == ["n7 + n8", "332", "332", "380", "0.875 -> 0.875", "named: the re-run agrees"]
    assert "pairs below 0.9 x the other pairs' median, re-run once" in res.stdout
    assert "re-running once before naming: n7 + n8" in res.stderr
    assert "NCCL validation: fail" in res.stdout


def test_a_recovered_pair_passes_and_says_so(cli, fabric) -> None:
    fabric.again = 0.98
    res = run(cli)
    assert res.exit_code == 0, res.stdout
    assert re.search(r"n7 \+ n8 .*332 .*372 .*380 .*0\.875 -> 0\.980 .*recovered on re-run",
                     res.stdout)  # fmt: skip
    assert "NCCL validation: pass" in res.stdout


def test_json_junit_report_and_history_carry_the_rerun(cli, fabric, tmp_path) -> None:
    junit, report = tmp_path / "r.xml", tmp_path / "r.html"
    res = run(
        cli, "--json", "--junit", str(junit), "--report", str(report), "--record", "azure-h100"
    )
    assert res.exit_code == 1, res.stderr
    (d,) = json.loads(res.stdout)["sweep"]["peer_suspects"]
    assert (d["pair"], d["verdict"], round(d["busbw_gbps"]), round(d["rerun_gbps"])) == (
        ["n7", "n8"], "named", 332, 332)  # fmt: skip
    assert (round(d["peer_median_gbps"]), round(d["ratio"], 3), d["rel_floor"]) == (380, 0.875, 0.9)

    line = "n7 + n8: 332 GB/s, re-run 332, is 0.875 -> 0.875 of the other pairs' median 380"
    case = ET.parse(junit).getroot().find(".//testcase[@name='peer check']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and line in failure.get("message", "")
    assert ET.parse(junit).getroot().get("failures") == "1"

    page = report.read_text()
    peers = re.search(r'<table class="peers">(.*?)</table>', page, re.S).group(1)
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", peers)
    assert cells == [
        "n7 + n8",
        "332",
        "332",
        "380",
        "0.875 -&gt; 0.875",
        "named: the re-run agrees",
    ]
    assert html.escape(f"pair {line}", quote=True) in page  # in the verdict's reasons too

    hist = cli("validate", "history", "-s", "azure-h100")
    assert f"#1 peer check: {line} (floor 0.9): named: the re-run agrees" in " ".join(
        hist.stdout.split()
    )
    (kept,) = json.loads(cli("validate", "history", "-s", "azure-h100", "--json").stdout)["runs"]
    assert kept["peer_suspects"] == [d]


def test_junit_without_suspects_has_a_passing_peer_check(cli, fabric, tmp_path) -> None:
    fabric.figure = lambda pair, attempt: HEALTHY
    junit = tmp_path / "r.xml"
    assert run(cli, "--junit", str(junit)).exit_code == 0
    case = ET.parse(junit).getroot().find(".//testcase[@name='peer check']")
    assert case is not None and case.find("failure") is None


@pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.2"])
def test_a_bad_peer_floor_is_one_line(cli, fabric, value) -> None:
    res = run(cli, "--peer-floor", value)
    assert res.exit_code == 2
    (line,) = error_lines(res.stderr)
    assert line.startswith("error: --peer-floor") and "above 0 and below 1" in line
    assert fabric.calls == []  # refused before anything ran


def test_the_peer_floor_from_the_command_line_is_used(cli, fabric) -> None:
    res = run(cli, "--peer-floor", "0.85", "--json")
    assert res.exit_code == 0, res.stderr  # 0.875 is above 0.85: no suspect
    sweep = json.loads(res.stdout)["sweep"]
    assert sweep["peer_floor"] == 0.85 and sweep["peer_suspects"] == []


def test_a_log_has_no_pairs_to_compare(cli) -> None:
    res = cli("validate", "--nccl", "--from-log", str(H100_LOG), "--peer-floor", "0.9")
    assert res.exit_code == 2
    (line,) = error_lines(res.stderr)
    assert "--peer-floor does nothing with --from-log" in line


@pytest.mark.parametrize(("value", "words"), [("1.5", "less than 1"), ("0", "greater than 0")])
def test_a_bad_peer_floor_in_the_stack_is_one_line(value, words) -> None:
    res = run_cli("plan", "-s", "azure-h100", "--set", f"validation.nccl.peerFloor={value}")
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert (
        line.startswith("error: ") and f"validation.nccl.peerFloor: Input should be {words}" in line
    )
