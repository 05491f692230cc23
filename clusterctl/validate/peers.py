"""How the peer check reads wherever a person reads it: the terminal, `--json`, `--junit`, the
acceptance report and the history. Each suspect pair shows its first figure, its re-run, the
other pairs' median, both ratios against it and the verdict (clusterctl.nccl.judge.SuspectPair).

The line is made from the JSON form, so a run kept in the history reads as it did when it ran
(runs kept before the re-run existed have no re-run: they read as unconfirmed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clusterctl.nccl.judge import SuspectPair

VERDICT_TEXT = {
    "named": "named: the re-run agrees",
    "recovered": "recovered on re-run",
    "unconfirmed": "not re-run",
}


def peer_json(p: SuspectPair) -> dict[str, Any]:
    return {
        "pair": list(p.pair),
        "busbw_gbps": p.busbw_gbps,
        "rerun_gbps": p.rerun_gbps,
        "peer_median_gbps": p.peer_median_gbps,
        "ratio": p.ratio,
        "rerun_ratio": p.rerun_ratio,
        "rel_floor": p.rel_floor,
        "verdict": p.verdict,
    }


def verdict_of(d: Mapping[str, Any]) -> str:
    return str(d.get("verdict") or "unconfirmed")


def peer_cells(d: Mapping[str, Any]) -> tuple[str, str, str, str, str, str]:
    """pair, first GB/s, re-run GB/s, peers' median, ratio (first -> re-run), verdict."""
    rerun, rerun_ratio = d.get("rerun_gbps"), d.get("rerun_ratio")
    median = d["peer_median_gbps"]
    ratio = d.get("ratio", d["busbw_gbps"] / median if median else 0.0)
    return (
        " + ".join(d["pair"]),
        f"{d['busbw_gbps']:.3g}",
        "-" if rerun is None else f"{rerun:.3g}",
        f"{median:.3g}",
        f"{ratio:.3f}" + ("" if rerun_ratio is None else f" -> {rerun_ratio:.3f}"),
        VERDICT_TEXT.get(verdict_of(d), verdict_of(d)),
    )


def peer_line(d: Mapping[str, Any]) -> str:
    """One sentence: `a + b: 350 GB/s, re-run 352, is 0.875 -> 0.880 of the other pairs' median
    400 (floor 0.9): named: the re-run agrees`."""
    pair, first, rerun, median, ratio, verdict = peer_cells(d)
    again = "" if rerun == "-" else f", re-run {rerun}"
    floor = f" (floor {d['rel_floor']:g})" if d.get("rel_floor") else ""
    return (
        f"{pair}: {first} GB/s{again}, is {ratio} of the other pairs' median {median}{floor}: "
        f"{verdict}"
    )


def peer_level(d: Mapping[str, Any]) -> str:
    """fail: named; warn: not re-run; info: recovered."""
    return {"named": "fail", "recovered": "info"}.get(verdict_of(d), "warn")


def with_peer_case(junit_xml: str, peers: Sequence[Mapping[str, Any]] | None) -> str:
    """`junit_xml` (clusterctl.nccl.report.to_junit) with one more testcase, `peer check`, in its
    suite: a <failure> when a pair is named, every suspect's line (recovered ones too) in its
    <system-out>. None: no pairs were measured, nothing is added."""
    if peers is None:
        return junit_xml
    import xml.etree.ElementTree as ET  # only for --junit

    root = ET.fromstring(junit_xml)
    suite = root.find("testsuite")
    assert suite is not None
    case = ET.SubElement(
        suite, "testcase", classname=f"{suite.get('name')}.pairs", name="peer check"
    )
    named = [peer_line(d) for d in peers if verdict_of(d) == "named"]
    if named:
        ET.SubElement(case, "failure", message=named[0], type="peers").text = "\n".join(named)
    if peers:
        ET.SubElement(case, "system-out").text = "\n".join(peer_line(d) for d in peers)
    for el in (suite, root):
        el.set("tests", str(int(el.get("tests", "0")) + 1))
        el.set("failures", str(int(el.get("failures", "0")) + bool(named)))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
