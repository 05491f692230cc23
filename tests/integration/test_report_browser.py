"""The acceptance report opened by a real headless browser (Debian's `chromium`).

Chromium loads the page from a file with every host name resolving nowhere and its own background
traffic (updates, sync) switched off as far as flags allow; its NetLog then records every request.
A request on the page's behalf carries the page's network isolation key (`file://`): there must be
none. A control page with one external image proves the check sees such a request.
"""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from clusterctl.acceptance.page import Context, html
from tests.conftest import need_tool
from tests.unit.acceptance.test_acceptance_report import outcome_of, sweep_outcome

pytestmark = pytest.mark.integration

FLAGS = [
    "--headless",
    "--no-sandbox",  # root in CI
    "--disable-gpu",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-first-run",
    "--hide-scrollbars",
    "--window-size=1000,1400",
]


def chromium(page: Path, tmp: Path, *extra: str) -> tuple[str, list[str]]:
    """(the DOM after load, the URLs requested on the page's behalf)."""
    exe = need_tool("chromium")
    netlog = tmp / f"{page.stem}.netlog.json"
    proc = subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={tmp / 'profile'}", f"--log-net-log={netlog}", *extra,
         page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    events = json.loads(netlog.read_text())["events"]
    from_page = sorted(
        {
            e["params"]["url"]
            for e in events
            if "url" in e.get("params", {})
            and "file://" in str(e["params"].get("network_isolation_key", ""))
        }
    )
    return proc.stdout, from_page


class Dom(HTMLParser):
    """Elements in document order: (tag, attributes, text directly inside)."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str], list[str]]] = []
        self.open: list[int] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}, []))
        if tag not in ("meta", "br", "img", "link", "input", "rect", "path", "use", "stop"):
            self.open.append(len(self.elements) - 1)

    def handle_endtag(self, tag) -> None:
        while self.open:
            if self.elements[self.open.pop()][0] == tag:
                break

    def handle_data(self, data) -> None:
        if self.open and data.strip():
            self.elements[self.open[-1]][2].append(data.strip())

    def find(self, tag: str, **attrs: str) -> list[tuple[str, dict[str, str], list[str]]]:
        def matches(e) -> bool:
            return e[0] == tag and all(e[1].get(k) == v for k, v in attrs.items())

        return [e for e in self.elements if matches(e)]


def parse(dom: str) -> Dom:
    d = Dom()
    d.feed(dom)
    return d


@pytest.fixture
def failing_report(tmp_path: Path) -> Path:
    outcome = sweep_outcome()
    socket = outcome_of("derived_azure_socket_fallback.txt")
    outcome.verdicts, outcome.runs = socket.verdicts, socket.runs
    ctx = Context(generated_at="2026-11-25T06:00:00+00:00", target="stack azure-h100")
    path = tmp_path / "report.html"
    path.write_text(html(outcome, ctx), encoding="utf-8")
    return path


def test_the_check_sees_a_page_that_fetches(tmp_path: Path) -> None:
    page = tmp_path / "fetches.html"
    page.write_text('<!DOCTYPE html><img src="https://example.com/x.png">')
    _, requested = chromium(page, tmp_path, "--dump-dom")
    assert requested == ["https://example.com/x.png"]


def test_the_report_renders_offline_with_its_failure_on_top(failing_report, tmp_path) -> None:
    dom, requested = chromium(failing_report, tmp_path, "--dump-dom")
    assert requested == []
    d = parse(dom)
    # nothing in the DOM points outside the file
    for tag, attrs, _ in d.elements:
        for key in ("src", "href", "xlink:href", "srcset", "action"):
            assert attrs.get(key, "#").startswith("#"), (tag, key, attrs[key])
    body = [e for e in d.elements if e[0] not in ("html", "head", "meta", "title", "style")]
    tag, attrs, _ = body[1]  # after <body>
    assert (tag, attrs.get("id"), attrs.get("data-status")) == ("header", "verdict", "fail")
    first_reason = next(e for e in d.elements if e[0] == "li")
    assert first_reason[1]["class"] == "fail"
    assert first_reason[2][0].startswith("NCCL fell back to NET/Socket")
    # the plot: an inline SVG with drawn paths and its legend as text
    assert len(d.find("figure", **{"class": "plot"})) == 1
    assert len(d.find("svg")) == 1 and len(d.find("path")) > 20 and len(d.find("use")) > 30
    texts = {t for e in d.elements if e[0] == "text" for t in e[2]}
    assert {"out-of-place", "in-place", "floor", "judged sizes", "message size"} <= texts
    # the pairs: a table, the failing pairs marked suspect, the drained node named
    rows = [e for e in d.find("tr") if e[1].get("class") == "suspect"]
    assert len(rows) == 3  # two failing pairs and the suspect node's own row
    assert any(e[2] == ["drained"] for e in d.find("td"))


def test_a_screenshot_shows_the_verdict_and_a_plot(failing_report, tmp_path) -> None:
    from PIL import Image  # matplotlib's own dependency

    shot = tmp_path / "report.png"
    _, requested = chromium(failing_report, tmp_path, f"--screenshot={shot}")
    assert requested == []
    img = Image.open(shot).convert("RGB")
    assert img.size == (1000, 1400)
    # the verdict band at the top: its red border and pale red background
    assert img.getpixel((20, 60)) == (0xC0, 0x39, 0x2B)
    assert img.getpixel((300, 30)) == (0xFD, 0xED, 0xEC)
    # the plot area: drawn, not blank, and the measured curves' blues are there
    plot = img.crop((60, 320, 980, 700))
    colours = plot.getcolors(maxcolors=1 << 16) or []
    drawn = sum(n for n, c in colours if c != (255, 255, 255))
    assert drawn > 0.05 * plot.size[0] * plot.size[1]
    assert any(abs(c[0] - 0x1F) + abs(c[1] - 0x4E) + abs(c[2] - 0x9C) < 30 for _, c in colours)


def test_it_prints_on_a_few_pages(failing_report, tmp_path) -> None:
    import re

    pdf = tmp_path / "report.pdf"
    _, requested = chromium(failing_report, tmp_path, f"--print-to-pdf={pdf}",
                            "--no-pdf-header-footer")  # fmt: skip
    assert requested == []
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf.read_bytes()))
    assert 1 <= pages <= 3, pages


def test_the_training_report_renders_offline_naming_the_straggler(tmp_path: Path) -> None:
    """`validate --train --report PATH.html`: written by the command from the recorded
    straggler run, opened in chromium: nothing fetched, the failure on top, the slow rank's row
    marked."""
    root = Path(__file__).resolve().parents[2]
    page = tmp_path / "train.html"
    proc = subprocess.run(
        [sys.executable, "-m", "clusterctl", "validate",
         "--train", "--from-log", str(root / "tests/data/train/straggler-2-node.out"),
         "--report", str(page)],
        capture_output=True, text=True, timeout=120, cwd=root,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    dom, requested = chromium(page, tmp_path, "--dump-dom")
    assert requested == []
    d = parse(dom)
    for tag, attrs, _ in d.elements:
        for key in ("src", "href", "xlink:href", "srcset", "action"):
            assert attrs.get(key, "#").startswith("#"), (tag, key, attrs[key])
    (header,) = d.find("header", id="verdict")
    assert header[1]["data-status"] == "fail"
    first_reason = next(e for e in d.elements if e[0] == "li")
    assert first_reason[2][0].startswith("gpu-pg0-2: rank 1 (GPU 0) drags the steps")
    suspects = [e for e in d.find("tr") if e[1].get("class") == "suspect"]
    assert len(suspects) == 1
    assert len(d.find("table", id="ranks")) == 1 and len(d.find("table", id="metrics")) == 1
