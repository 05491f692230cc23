"""Bus bandwidth against message size, drawn with matplotlib (Agg; no display, no pyplot state).

One axes per node group: out-of-place and in-place busbw over the SKU's published baseline curve,
the floor (along the baseline's curve below its message size), the warning level, the judged
sizes marked, and the first accepted run of the stack in grey. Pure: verdicts in, bytes out.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from clusterctl.nccl.judge import Verdict
from clusterctl.nccl.units import fmt_bytes

# Colours that stay apart in greyscale print too (darker for the measured lines).
_OOP, _IP, _BASE, _FLOOR, _WARN, _FIRST = (
    "#1f4e9c",
    "#4fa3e0",
    "#2e8b57",
    "#c0392b",
    "#d68910",
    "#8c8c8c",
)
_SVG_META = {"Date": None, "Creator": None, "Format": None, "Type": None}


def _style():
    # Fixed ids in the SVG (with no date in its metadata): the same outcome draws the same bytes.
    # Text stays text, so the page can be searched and the plot's labels read in its DOM.
    return matplotlib.rc_context(
        {"svg.hashsalt": "clusterctl", "svg.fonttype": "none", "font.size": 9}
    )


@dataclass(frozen=True)
class Reference:
    """Another run of the same group to draw under this one (the stack's first accepted run)."""

    label: str
    points: tuple[tuple[int, float], ...]  # (message bytes, worst busbw GB/s)


def _ticks(sizes: Sequence[int]) -> list[int]:
    """Powers of two across the sizes, at most 9 of them."""
    lo, hi = min(sizes).bit_length() - 1, max(sizes).bit_length() - 1
    step = max(1, -(-(hi - lo) // 8))
    return [1 << k for k in range(lo, hi + 1, step)]


def _draw(ax: Axes, v: Verdict, reference: Reference | None) -> None:
    sizes = [s for s in v.sizes if s.size_bytes > 0]
    if not sizes:
        ax.text(0.5, 0.5, "no message sizes measured", ha="center", transform=ax.transAxes)
        return
    xs = [s.size_bytes for s in sizes]
    th = v.thresholds
    top = max(xs[-1], th.message_bytes)
    if reference is not None and reference.points:
        rx, ry = zip(*reference.points, strict=True)
        ax.plot(rx, ry, color=_FIRST, lw=1.2, ls="-", label=reference.label, zorder=1)
    if th.published:
        px, py = zip(*th.published, strict=True)
        ax.plot(px, py, color=_BASE, lw=1.5, marker="D", ms=4, label="SKU baseline (published)")
    floor = [
        (x, th.fail_below_gbps * share)
        for x in sorted({*xs, th.message_bytes})
        if (share := th.share_at(x)) is not None
    ]
    if floor:
        fx, fy = zip(*[*floor, (top * 4, floor[-1][1])], strict=True)
        ax.plot(fx, fy, color=_FLOOR, lw=2, ls="--", drawstyle="steps-post", label="floor")
        ax.annotate(
            f"floor {round(floor[-1][1], 2):g}",
            (floor[-1][0], floor[-1][1]),
            textcoords="offset points",
            xytext=(-4, 4),
            ha="right",
            color=_FLOOR,
            fontsize=8,
        )
    if th.warn_below_gbps is not None:
        ax.axhline(th.warn_below_gbps, color=_WARN, lw=1, ls=":", label="warning level")
    ax.plot(xs, [s.out_of_place_busbw_gbps for s in sizes], color=_OOP, lw=2, marker="o", ms=3,
            label="out-of-place")  # fmt: skip
    ax.plot(xs, [s.in_place_busbw_gbps for s in sizes], color=_IP, lw=1.5, ls="-.", marker="s",
            ms=3, label="in-place")  # fmt: skip
    judged = [s for s in sizes if s.gated]
    if judged:
        ax.axvspan(judged[0].size_bytes / 1.2, judged[-1].size_bytes * 1.2, color="#f2f2f2",
                   zorder=0)  # fmt: skip
        ax.scatter([s.size_bytes for s in judged], [s.busbw_gbps for s in judged], s=90,
                   facecolors="none", edgecolors="black", linewidths=1.2, zorder=5,
                   label="judged sizes")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xlim(xs[0] / 1.5, top * 4)
    ticks = _ticks([xs[0], top])
    ax.set_xticks(ticks, [fmt_bytes(t).replace(" ", "\u00a0") for t in ticks])
    ax.minorticks_off()
    ax.set_ylim(0, ax.get_ylim()[1] * 1.1)  # room above the floor's label and the legend
    ax.set_xlabel("message size")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.grid(True, color="#dddddd", lw=0.6)
    ax.set_title(f"{v.group or 'cluster'}: {v.status}", loc="left", fontweight="bold")
    ax.legend(loc="upper left", fontsize=7, frameon=True)


def figure(
    verdicts: Sequence[Verdict],
    *,
    references: Sequence[Reference | None] = (),
    title: str | None = None,
) -> Figure:
    """One axes per group, stacked; `references` run parallel to `verdicts`."""
    n = max(1, len(verdicts))
    refs = list(references) + [None] * (len(verdicts) - len(references))
    with _style():
        fig = Figure(figsize=(8, 3.6 * n + (0.5 if title else 0)), layout="constrained")
        axes = fig.subplots(n, 1, squeeze=False)[:, 0]
        for ax, v, ref in zip(axes, verdicts, refs, strict=False):
            _draw(ax, v, ref)
        if title:
            fig.suptitle(title, x=0.01, ha="left", fontsize=10)
    return fig


def render(fig: Figure, fmt: str) -> bytes:
    """The figure as `svg` or `png` bytes."""
    buf = io.BytesIO()
    with _style():
        fig.savefig(buf, format=fmt, dpi=110, metadata=_SVG_META if fmt == "svg" else None)
    return buf.getvalue()


def inline_svg(fig: Figure) -> str:
    """The figure as an <svg> element for an HTML page: no XML prolog or DOCTYPE, and sized by
    the page (its viewBox kept) rather than in points."""
    text = render(fig, "svg").decode()
    text = text[text.index("<svg") :]
    return re.sub(
        r'<svg([^>]*?) width="[^"]*" height="[^"]*"',
        r'<svg\1 role="img" style="width:100%;height:auto"',
        text,
        count=1,
    )
