"""The default-algorithm run is shown wherever the Ring run is: the terminal, `--json`,
`--junit`, the HTML report and `validate history`; judged where the catalog has figures for it,
else reported with why not. The run is `validate --nccl --host` with its scheduler replaced by a
launcher stand-in (tests/validate/test_default_algorithm.py)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.data.nccl.derive_fabric_margin import ib_log
from tests.validate.test_default_algorithm import A100, H100, Launcher, _target


@pytest.fixture
def cluster(monkeypatch):
    """Point `validate --host` at a stand-in cluster: `cluster(sku, ring_log, default_log)`."""
    import clusterctl.cli.common as common
    import clusterctl.validate.run as run

    real = run.validate

    def use(sku: str, ring: str, default: str) -> None:
        monkeypatch.setattr(common, "resolve_target", lambda **_: _target(sku))
        monkeypatch.setattr(
            run, "validate", lambda t, o: real(t, o, launcher=Launcher(ring, default))
        )

    return use


def run(cli, *extra: str):
    return cli("validate", "--nccl", "--host", "admin@sched", *extra)


def test_a_judged_default_run_shows_everywhere_and_fails_the_run(cli, cluster, tmp_path) -> None:
    cluster(H100, ib_log(381.4), ib_log(381.4))  # Ring healthy, default 15% under 450
    res = run(cli)
    assert res.exit_code == 1, res.stdout
    text = " ".join(res.stdout.split())
    assert "gpu (default algorithm)" in text  # its own row in the table
    assert "NCCL's default algorithm (NCCL_ALGO unset): busbw 381" in text
    assert "expected 450 GB/s (measured) at 16 GiB" in text
    assert "NCCL validation: fail" in text

    junit, report = tmp_path / "r.xml", tmp_path / "r.html"
    res = run(
        cli, "--json", "--junit", str(junit), "--report", str(report), "--record", "azure-h100"
    )
    data = json.loads(res.stdout)
    assert [g["algorithm"] for g in data["groups"]] == ["Ring"]  # the Ring group as before
    assert data["groups"][0]["status"] == "pass" and data["status"] == "fail"
    assert (data["default_algorithm"]["status"], data["default_algorithm"]["judged"]) == (
        "fail",
        True,
    )
    root = ET.parse(junit).getroot()
    case = root.find(".//testcase[@classname='nccl.all_reduce.gpu (default algorithm)']"
                     "[@name='bandwidth']")  # fmt: skip
    assert case is not None and case.find("failure") is not None
    page = report.read_text()
    assert "gpu (default algorithm)" in page and "below the floor 396 GB/s" in page

    hist = cli("validate", "history", "-s", "azure-h100")
    assert "#1 NCCL&#x27;s" not in hist.stdout  # plain text, not markup
    assert "#1 NCCL's default algorithm (NCCL_ALGO unset): busbw 381" in " ".join(
        hist.stdout.split()
    )
    (kept,) = json.loads(cli("validate", "history", "-s", "azure-h100", "--json").stdout)["runs"]
    assert kept["default_algorithm"] == data["default_algorithm"]


def test_an_unjudged_default_run_says_why_and_leaves_the_verdict_alone(
    cli, cluster, tmp_path
) -> None:
    cluster(A100, ib_log(187.0), ib_log(186.0))
    junit, report = tmp_path / "r.xml", tmp_path / "r.html"
    res = run(cli, "--junit", str(junit), "--report", str(report))
    assert res.exit_code == 0, res.stdout
    text = " ".join(res.stdout.split())
    assert (
        "not judged: config/skus.yaml has no default-algorithm figure for Standard_ND96asr_v4"
        in text
    )
    assert "NCCL validation: pass" in text
    case = (
        ET.parse(junit)
        .getroot()
        .find(
            ".//testcase[@classname='nccl.all_reduce.gpu (default algorithm)'][@name='bandwidth']"
        )
    )
    assert case is not None and case.find("skipped") is not None  # not passed: skipped
    assert "not judged" in case.find("skipped").get("message", "")  # type: ignore[union-attr]
    assert 'class="default-algorithm' in report.read_text()
    data = json.loads(run(cli, "--json").stdout)
    assert data["default_algorithm"]["judged"] is False
    assert "no default-algorithm figure" in data["default_algorithm"]["why_not"]
