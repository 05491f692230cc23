"""The acceptance report: pure rendering of an outcome as HTML, PNG and SVG."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clusterctl.acceptance.page import Context, html, picture
from clusterctl.nccl.localize import Localization, PairResult, Suspect
from clusterctl.validate.history import History
from clusterctl.validate.run import Options, validate_log
from clusterctl.validate.sweep import SweepResult
from clusterctl.validate.targets import LogTarget

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl"
H100 = "Standard_ND96isr_H100_v5"
CTX = Context(generated_at="2026-11-25T06:00:00+00:00", target="log x.txt", invocation="clusterctl")


def outcome_of(sample: str, sku: str | None = H100, **opts):
    return validate_log(LogTarget(DATA / sample, sku, None), Options(**opts))


def sweep_outcome():
    """A passing group whose sweep found node-3 bad (drained) and cleared the rest."""
    out = outcome_of("derived_azure_ib_gdr.txt")
    m = [
        PairResult(1, ("node-1", "node-2"), 452.0, True),
        PairResult(1, ("node-3", "node-4"), 61.5, False),
        PairResult(2, ("node-3", "node-1"), 60.2, False),
        PairResult(2, ("node-4", "node-2"), 449.8, True),
    ]
    bad = Suspect("node-3", "bad", "failed with 2 healthy partners", (m[1], m[2]))
    loc = Localization((bad,), ("node-1", "node-2", "node-4"), 2, tuple(m))
    out.sweep = SweepResult(loc, [], 300.0)
    out.drained = ["node-3"]
    return out


def body_text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_a_failing_run_shows_its_failure_first() -> None:
    page = html(outcome_of("derived_azure_socket_fallback.txt"), CTX)
    header = re.search(r'<header id="verdict"[^>]*>(.*?)</header>', page, re.S)
    assert header and page.index("<header") < page.index("<svg")
    assert 'data-status="fail"' in page
    first = re.search(r'<li class="(\w+)">([^<]*)</li>', header.group(1))
    assert first and first.group(1) == "fail"
    assert first.group(2).startswith("NCCL fell back to NET/Socket")
    assert "FAIL" in re.search(r"<h1>(.*?)</h1>", header.group(1)).group(1)


def test_the_page_is_self_contained() -> None:
    page = html(sweep_outcome(), CTX)
    assert not re.search(r"<script|<link|<img|<iframe|@import", page, re.I)
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page)
    assert all(r.startswith("#") for r in refs), refs
    assert not re.search(r"url\((?!#)", page)
    assert "<!DOCTYPE svg" not in page and "<?xml" not in page
    assert page.count("<svg") == 1


def test_plot_sizes_and_facts() -> None:
    page = html(outcome_of("derived_azure_ib_gdr.txt"), CTX)
    svg = page[page.index("<svg") : page.index("</svg>")]
    # the legend names every curve; the SKU's published curve only exists for one node
    for label in ("out-of-place", "in-place", "floor", "judged sizes"):
        assert f"{label}" in svg
    assert "2\u00a0GiB" in svg and "8\u00a0B" in svg  # the log2 axis is labelled in bytes
    text = body_text(page)
    for fact in ("bm-h100-01, bm-h100-02", "2.26.2+cuda12.8", "CUDA driver API 12.8",
                 "NET/IB (mlx5_ib0:1", "8 per host: NVIDIA H100 80GB HBM3"):  # fmt: skip
        assert fact in text, fact
    sizes = re.search(r'<table class="sizes">(.*?)</table>', page, re.S).group(1)
    assert re.search(r'<tr class="judged"><td>16 GiB</td><td class="n">469.21</td>', sizes)


def test_the_skus_published_curve_is_drawn_where_the_catalog_has_one() -> None:
    from clusterctl.acceptance.plot import figure, inline_svg
    from clusterctl.nccl.judge import judge
    from clusterctl.nccl.parse import parse_all_reduce
    from clusterctl.spec.catalog import catalog
    from clusterctl.validate.thresholds import choose

    one_node = choose(catalog().require(H100).baseline(1))  # ND H100 v5: 1-8 GiB published
    assert [at for at, _ in one_node.published] == [1 << 30, 2 << 30, 4 << 30, 8 << 30]
    run = parse_all_reduce((DATA / "nccl_tests_issue309_h100_2node.txt").read_text())
    svg = inline_svg(figure([judge(run, one_node, group="gpu")]))
    assert "SKU baseline (published)" in svg and "gpu: pass" in svg
    two_nodes = outcome_of("nccl_tests_issue309_h100_2node.txt")
    assert "SKU baseline (published)" not in html(two_nodes, CTX)  # none published for 2 nodes


def test_sweep_pairs_are_a_table_with_suspects_highlighted_and_drains_named() -> None:
    page = html(sweep_outcome(), CTX)
    pairs = re.search(r'<table class="pairs">(.*?)</table>', page, re.S).group(1)
    rows = re.findall(r'<tr class="(\w*)"><td class="n">(\d)</td><td>([^<]*)</td>', pairs)
    assert rows == [
        ("", "1", "node-1 + node-2"),
        ("suspect", "1", "node-3 + node-4"),
        ("suspect", "2", "node-3 + node-1"),
        ("", "2", "node-4 + node-2"),
    ]
    suspects = re.search(r'<table class="suspects">(.*?)</table>', page, re.S).group(1)
    assert "<td>node-3</td><td>bad</td>" in suspects and "<td>drained</td>" in suspects
    header = page[: page.index("</header>")]
    assert "node-3 bad: failed with 2 healthy partners" in header
    assert "drained: node-3" in header


def test_this_run_against_the_first_accepted(tmp_path) -> None:
    from clusterctl.cli.report import outcome_json

    history = History(tmp_path / "h.sqlite")
    good = outcome_of("derived_azure_ib_gdr.txt")
    first = history.record(
        "azure-h100", outcome_json(good), at="2026-10-01T09:00:00+00:00", source="run",
        sku=H100, nodes=2, network="IB/GDRDMA", nccl_version="2.26.2+cuda12.8",
    )  # fmt: skip
    ctx = Context(**{**CTX.__dict__, "stack": "azure-h100", "first_accepted": first})
    page = html(outcome_of("derived_azure_socket_fallback.txt"), ctx)
    section = re.search(r'<section id="comparison">(.*?)</section>', page, re.S).group(1)
    assert "Run #1 of stack azure-h100, 2026-10-01T09:00:00+00:00 (pass, run)" in section
    assert '<td class="n">469.10</td><td class="n">4.69</td><td class="n">-99.0%</td>' in section
    assert "first accepted run #1 (2026-10-01)" in page  # the grey curve's legend entry


def test_no_accepted_run_yet_is_said() -> None:
    ctx = Context(**{**CTX.__dict__, "stack": "azure-h100"})
    page = html(outcome_of("derived_azure_ib_gdr.txt"), ctx)
    assert "has no accepted run before this one" in page and "this run is its first" in page


def test_the_page_is_the_same_for_the_same_outcome() -> None:
    assert html(sweep_outcome(), CTX) == html(sweep_outcome(), CTX)


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_pictures_for_a_ticket(fmt) -> None:
    data = picture(outcome_of("derived_azure_socket_fallback.txt"), CTX, fmt)
    if fmt == "svg":
        text = data.decode()
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert "NCCL fell back to NET/Socket" in text and "FAIL" in text
        return
    import io

    from PIL import Image  # matplotlib's own dependency

    img = Image.open(io.BytesIO(data)).convert("L")
    assert img.size[0] > 600 and img.size[1] > 300
    dark = sum(n for n, level in img.getcolors(256) or [] if level < 128)
    assert dark > 1000  # axes, curves and text, not a blank canvas
