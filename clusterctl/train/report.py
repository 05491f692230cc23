"""A training verdict as JSON and JUnit XML (standard library only; the CLI draws the table)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from clusterctl.train.judge import STRAGGLER_RATIO, Metrics, TrainVerdict


def _metrics(m: Metrics | None) -> dict[str, Any] | None:
    if m is None:
        return None
    d = asdict(m)
    for k in ("tokens_per_s_per_gpu", "step_median_s", "step_p99_s"):
        d[k] = round(d[k], 6)
    return d


def to_json(v: TrainVerdict, *, preset: str, sku: str | None, target: str, command: str):
    return {
        "check": "train",
        "status": v.status,
        "exit_code": v.exit_code,
        "target": target,
        "sku": sku,
        "preset": preset,
        "command": command,
        "metrics": _metrics(v.metrics),
        "single_node": _metrics(v.single),
        "scaling": None if v.scaling is None else round(v.scaling, 4),
        "scaling_floor": v.scaling_floor,
        "floor": asdict(v.floor),
        "straggler_ratio": STRAGGLER_RATIO,
        "stragglers": [{**asdict(s), "ratio": round(s.ratio, 3)} for s in v.stragglers],
        "failures": [asdict(f) for f in v.failures],
        "bad_nodes": list(v.bad_nodes),
        "reasons": list(v.reasons),
        "notes": list(v.notes),
    }


def to_junit(v: TrainVerdict, *, suite: str = "train.ddp") -> str:
    """Testcases: the run itself, stragglers, throughput, scaling."""
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name=suite)
    ts = ET.SubElement(root, "testsuite", name=suite)
    failed_run = [f.line() for f in v.failures]
    cases = {
        "run": failed_run,
        "stragglers": [s.line() for s in v.stragglers],
        "throughput": [r for r in v.reasons if "tokens/s per GPU" in r],
        "scaling": [r for r in v.reasons if r.startswith("scaling efficiency")],
    }
    failures = skipped = 0
    for name, problems in cases.items():
        case = ET.SubElement(ts, "testcase", classname=suite, name=name)
        if problems:
            failures += 1
            node = ET.SubElement(case, "failure", message=problems[0], type=name)
            node.text = "\n".join(problems)
        elif name != "run" and (failed_run or v.metrics is None):
            skipped += 1
            ET.SubElement(case, "skipped", message="the run did not complete")
        elif name == "throughput" and v.floor.tokens_per_s_per_gpu is None:
            skipped += 1
            ET.SubElement(case, "skipped", message=v.floor.source)
        elif name == "scaling" and (v.scaling is None or v.scaling_floor is None):
            skipped += 1
            ET.SubElement(case, "skipped", message=v.scaling_note or "no one-node reference")
    ts.set("tests", str(len(cases)))
    ts.set("failures", str(failures))
    ts.set("skipped", str(skipped))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
