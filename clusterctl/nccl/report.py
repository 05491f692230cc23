"""Reports over verdicts: table rows (plain text here; the CLI draws them with rich), a
JSON-ready dict and JUnit XML.

Each verdict is one node group (e.g. a Slurm partition); within it, one line per message size.
Standard library only (see the import contracts in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clusterctl.nccl.judge import AlgorithmRun, SizeFigure, Verdict, overall_status
from clusterctl.nccl.units import fmt_bytes

__all__ = [
    "HEADERS",
    "algorithm_json",
    "algorithm_lines",
    "expected_lines",
    "fabric_lines",
    "reasons",
    "render_plain",
    "table_lines",
    "to_json",
    "to_junit",
]

HEADERS = ("group", "size", "busbw oop", "busbw ip", "floor", "margin", "status")


def table_lines(verdicts: Sequence[Verdict], *, all_sizes: bool) -> list[tuple[str, ...]]:
    lines: list[tuple[str, ...]] = []
    for v in verdicts:
        shown = [s for s in v.sizes if all_sizes or s.gated] or list(v.sizes[-1:])
        for s in shown:
            floor = s.floor_gbps or v.thresholds.fail_below_gbps
            margin = (s.busbw_gbps - floor) / floor
            lines.append(
                (
                    v.group or "-",
                    fmt_bytes(s.size_bytes),
                    f"{s.out_of_place_busbw_gbps:.2f}",
                    f"{s.in_place_busbw_gbps:.2f}",
                    f"{round(floor, 2):g}" if s.gated else "-",
                    f"{margin * 100:+.1f}%" if s.gated else "-",
                    v.status if s.gated or not v.gated_sizes else "",
                )
            )
    return lines


def fabric_lines(v: Verdict) -> list[str]:
    """One line per host: what NCCL's INFO lines say its network was, against the SKU's."""
    if not v.fabric:
        return []
    want = ""
    if v.expect is not None:
        unit = {"infiniband": "IB devices", "efa": "EFA NICs"}[v.expect.kind]
        gdr = ", GPUDirect RDMA" if v.expect.gdr else ""
        want = f" [SKU: {v.expect.devices} {unit}{gdr}]"
    return [f"fabric {f.host}: {f.describe()}{want}" for f in v.fabric]


def expected_lines(v: Verdict) -> list[str]:
    """`expected 384 GB/s (derived) at 16 GiB, measured 336.00 (-12.5%); warn below 357, fail
    below 338`: the verdict's figure against what a healthy cluster delivers."""
    th = v.thresholds
    if th.expected_gbps is None:
        return []
    basis = f" ({th.expected_basis})" if th.expected_basis else ""
    text = f"expected {th.expected_gbps:g} GB/s{basis} at {fmt_bytes(th.message_bytes)}"
    at = [s for s in v.sizes if s.gated and s.size_bytes >= th.message_bytes]
    if at:
        worst = min(s.busbw_gbps for s in at)
        pct = (worst - th.expected_gbps) / th.expected_gbps * 100
        text += f", measured {worst:.2f} ({pct:+.1f}%)"
    warn = f"warn below {th.warn_below_gbps:g}, " if th.warn_below_gbps is not None else ""
    return [f"{text}; {warn}fail below {th.fail_below_gbps:g}"]


def algorithm_lines(a: AlgorithmRun | None) -> list[str]:
    """The default-algorithm run in one line, then its expected figure where it was judged."""
    if a is None:
        return []
    return [a.line()] + (expected_lines(a.verdict) if a.verdict is not None else [])


def reasons(verdicts: Sequence[Verdict]) -> list[tuple[str, str]]:
    """(group, reason) for every reason a verdict gives."""
    return [(v.group or "-", r) for v in verdicts for r in v.reasons]


def render_plain(verdicts: Sequence[Verdict], *, all_sizes: bool = False) -> str:
    """Busbw per group and message size (gated sizes only unless `all_sizes`), then reasons."""
    lines = table_lines(verdicts, all_sizes=all_sizes)
    widths = [max(len(row[i]) for row in [HEADERS, *lines]) for i in range(len(HEADERS))]
    text = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [HEADERS, *lines]
    ]
    for v in verdicts:
        text += [f"{v.group or '-'}: {line}" for line in expected_lines(v) + fabric_lines(v)]
    text += [f"{group}: {reason}" for group, reason in reasons(verdicts)]
    text.append(f"overall: {overall_status(verdicts)}")
    return "\n".join(text) + "\n"


def to_json(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    return {
        "status": overall_status(verdicts),
        "groups": [
            {
                "group": v.group,
                "algorithm": v.algorithm,
                "status": v.status,
                "measured_busbw_gbps": v.measured_busbw_gbps,
                "margin_pct": None if v.margin_pct is None else round(v.margin_pct, 2),
                "n_ranks": v.n_ranks,
                "hosts": list(v.hosts),
                "networks": [
                    {
                        "name": n.name,
                        "kind": n.kind,
                        "hosts": list(n.hosts),
                        "devices": list(n.devices),
                        "provider": n.provider,
                        "gdr": n.gdr,
                    }
                    for n in v.networks
                ],
                "fabric": [
                    {
                        "host": f.host,
                        "network": f.network,
                        "kind": f.kind,
                        "devices": list(f.devices),
                        "device_count": f.device_count,
                        "other_devices": list(f.other_devices),
                        "provider": f.provider,
                        "gdr": f.gdr,
                        "net_channels": f.net_channels,
                        "gdr_channels": f.gdr_channels,
                    }
                    for f in v.fabric
                ],
                "fabric_expected": None
                if v.expect is None
                else {
                    "kind": v.expect.kind,
                    "devices": v.expect.devices,
                    "gdr": v.expect.gdr,
                    "source": v.expect.source,
                },
                "thresholds": {
                    "fail_below_gbps": v.thresholds.fail_below_gbps,
                    "warn_below_gbps": v.thresholds.warn_below_gbps,
                    "expected_gbps": v.thresholds.expected_gbps,
                    "expected_basis": v.thresholds.expected_basis or None,
                    "message_bytes": v.thresholds.message_bytes,
                    "source": v.thresholds.source,
                },
                "reasons": list(v.reasons),
                "sizes": [size_json(s) for s in v.sizes],
                "findings": [
                    {"level": f.level, "kind": f.kind, "message": f.message} for f in v.findings
                ],
            }
            for v in verdicts
        ],
    }


def size_json(s: SizeFigure) -> dict[str, Any]:
    """One message size of a judged run, as every JSON output shows it."""
    return {
        "size_bytes": s.size_bytes,
        "busbw_out_of_place_gbps": s.out_of_place_busbw_gbps,
        "busbw_in_place_gbps": s.in_place_busbw_gbps,
        "gated": s.gated,
        "floor_gbps": s.floor_gbps,
    }


def algorithm_json(a: AlgorithmRun) -> dict[str, Any]:
    """The default-algorithm run: `group` is a whole group object (as in `groups`) when it was
    judged, else None and `why_not` says why; `sizes` are what it measured either way."""
    return {
        "algorithm": a.algorithm,
        "status": a.status,
        "judged": a.judged,
        "why_not": a.why_not or None,
        "measured_busbw_gbps": a.measured_busbw_gbps,
        "summary": a.line(),
        "reasons": [f.message for f in a.findings if f.level != "info"],
        "sizes": [size_json(s) for s in a.sizes],
        "group": None if a.verdict is None else to_json([a.verdict])["groups"][0],
    }


def to_junit(
    verdicts: Sequence[Verdict],
    *,
    suite: str = "nccl.all_reduce",
    default_algorithm: AlgorithmRun | None = None,
) -> str:
    """One testcase per group and check (correctness, bandwidth, and fabric where NCCL's INFO
    lines name the hosts' networks).

    A failed check is a <failure>; a bandwidth check that could not be judged is <skipped>;
    warnings go to <system-out> of a passing case, with the expected figure and each host's
    fabric. The default-algorithm run adds its own cases when judged; when not, one `bandwidth`
    case <skipped> with the reason (and a `correctness` failure if its result was wrong).
    """
    import xml.etree.ElementTree as ET  # only for --junit: not on every command's path

    root = ET.Element("testsuites", name=suite)
    ts = ET.SubElement(root, "testsuite", name=suite)
    tests = failures = skipped = 0
    judged = [default_algorithm.verdict] if default_algorithm and default_algorithm.verdict else []
    for v in [*verdicts, *judged]:
        classname = f"{suite}.{v.group or 'cluster'}"
        own_fabric = bool(v.fabric)
        for kind in ("correctness", "bandwidth", "fabric")[: 3 if own_fabric else 2]:
            folded = ("coverage",) if own_fabric else ("coverage", "fabric")
            found = [
                f
                for f in v.findings
                if f.kind == kind or (kind == "bandwidth" and f.kind in folded)
            ]
            case = ET.SubElement(ts, "testcase", classname=classname, name=kind)
            tests += 1
            fails = [f.message for f in found if f.level == "fail"]
            if fails:
                failures += 1
                node = ET.SubElement(case, "failure", message=fails[0], type=kind)
                node.text = "\n".join(fails)
            elif kind == "bandwidth" and v.status == "inconclusive":
                skipped += 1
                ET.SubElement(case, "skipped", message="; ".join(v.reasons) or "not judged")
            warns = [f.message for f in found if f.level in ("warn", "info")]
            warns += {"bandwidth": expected_lines(v), "fabric": fabric_lines(v)}.get(kind, [])
            if warns:
                ET.SubElement(case, "system-out").text = "\n".join(warns)
    a = default_algorithm
    if a is not None and a.verdict is None:
        classname = f"{suite}.{a.group or 'default algorithm'}"
        fails = [f.message for f in a.checks if f.level == "fail"]
        if fails:
            case = ET.SubElement(ts, "testcase", classname=classname, name="correctness")
            tests += 1
            failures += 1
            ET.SubElement(case, "failure", message=fails[0], type="correctness").text = "\n".join(
                fails
            )
        case = ET.SubElement(ts, "testcase", classname=classname, name="bandwidth")
        tests += 1
        skipped += 1
        ET.SubElement(case, "skipped", message=a.line())
    for el in (ts, root):
        el.set("tests", str(tests))
        el.set("failures", str(failures))
        el.set("errors", "0")
    ts.set("skipped", str(skipped))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
